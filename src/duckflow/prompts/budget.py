"""Token budget per prompt layer (seed 001 §11): count with the real tokenizer, cut in a fixed order.

Limits come from config (`budget.base_tokens / main_tokens / specialized_tokens`, defaults
500 / 800 / 1200). When a layer is over, items are removed one at a time, least needed for the
next step first — evidence → conversation summary → open_questions → plan_brief (seed 001 §11) — and the prompts are
rendered again, until every layer fits or nothing cuttable is left. The report says what was
cut and what is still over, so nothing is dropped silently.

The codec's tool instructions (Sym-Ops / DML syntax and tool stubs, fixed per session) are
part of the Specialized text but not of its budget: they cannot be cut, so counting them
would only force useless cuts. They are reported as their own figure, `tokens["tools"]`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

from duckflow.prompts.render import PromptBuilder, PromptInputs

CUT_ORDER = ("evidence", "conversation", "open_questions", "plan_brief")
# which layers show each kind (a cut is only made where it helps an over-budget layer)
_SHOWN_IN = {
    "evidence": {"main", "specialized"},
    "conversation": {"base", "main"},
    "open_questions": {"main"},
    "plan_brief": {"main", "specialized"},
}

Counter = Callable[[str], int]


@dataclass(frozen=True)
class LayerBudget:
    base: int = 500
    main: int = 800
    specialized: int = 1200


@dataclass
class BudgetReport:
    tokens: dict[str, int] = field(default_factory=dict)
    limits: dict[str, int] = field(default_factory=dict)
    cuts: list[str] = field(default_factory=list)
    over: dict[str, int] = field(default_factory=dict)
    exact: bool = False
    method: str = ""


@dataclass
class BuiltPrompts:
    base: str
    main: str
    specialized: str | None
    report: BudgetReport


@functools.lru_cache(maxsize=1)
def token_counter() -> tuple[Counter, bool, str]:
    """`count_tokens` (exact where it can be) with a small cache, and whether it is exact."""
    from duckflow.llm.tokens import count_tokens

    probe = count_tokens("probe")

    @functools.lru_cache(maxsize=64)
    def count(text: str) -> int:  # a layer is often rendered twice per turn: count it once
        return int(count_tokens(text).tokens)

    return count, bool(probe.exact), str(probe.method)


def _fits(text: str, limit: int | None, exact: list[bool]) -> int:
    """The layer's tokens: the cheap upper bound when it proves the layer fits (or is exact),
    else the exact count. The bound is never below the count, so "fits" is never wrong.
    `exact` gets False appended when the figure returned is a bound."""
    from duckflow.llm.tokens import token_bound

    bound = token_bound(text)
    if bound.exact or (limit is not None and bound.tokens <= limit):
        if not bound.exact:
            exact.append(False)
        return bound.tokens
    count, _, _ = token_counter()
    return count(text)


def _cut_one(inp: PromptInputs, kind: str) -> str | None:
    """Remove one item of `kind`; returns a description, or None when nothing is left."""
    if kind == "evidence" and inp.evidence:
        item = inp.evidence.pop(0)  # oldest evidence first
        return f"evidence: {item[:40]}"
    if kind == "conversation":
        if inp.past_sessions:  # the oldest past session first, then this session's summaries
            return f"past session: {inp.past_sessions.pop(0)[:40]}"
        if inp.summaries:
            return f"conversation summary: {inp.summaries.pop(0)[:40]}"
        if inp.recent_turns:
            return f"recent turn: {inp.recent_turns.pop(0)[:40]}"
        return None
    if kind == "open_questions" and inp.open_questions:
        return f"open question: {inp.open_questions.pop()[:40]}"
    if kind == "plan_brief" and inp.plan_brief:
        return f"plan step: {inp.plan_brief.pop()[:40]}"
    return None


def build_prompts(
    builder: PromptBuilder,
    inputs: PromptInputs,
    budget: LayerBudget,
    *,
    specialized_step: str | None = None,
    counter: Counter | None = None,
) -> BuiltPrompts:
    """Render Base, Main (and Specialized when a step is given) within the budget."""
    bounds: list[bool] = []
    if counter is None:
        exact, method = True, "tiktoken:cl100k_base (pieces cached; upper bound where it proves a fit)"
    else:
        exact, method = False, "given counter"
    inp = inputs.copy()
    tools_text, inp.tools = inp.tools, ""
    limits = {"base": budget.base, "main": budget.main}
    project = 0
    if inp.project:  # AGENTS.md has its own budget (companion.agents_md_tokens): Base's grows by it
        project = counter(inp.project) if counter is not None else token_counter()[0](inp.project)
        limits["base"] += project
    if specialized_step:
        limits["specialized"] = budget.specialized
    report = BudgetReport(limits=limits, exact=exact, method=method)
    while True:
        texts = {"base": builder.base(inp), "main": builder.main(inp)}
        if specialized_step:
            texts["specialized"] = builder.specialized(specialized_step, inp)
        report.tokens = {k: counter(v) if counter is not None else _fits(v, limits.get(k), bounds)
                         for k, v in texts.items()}
        over = {k: report.tokens[k] - limits[k] for k in limits if report.tokens[k] > limits[k]}
        if not over:
            report.over = {}
            break
        cut = None
        for kind in CUT_ORDER:
            if _SHOWN_IN[kind] & set(over):
                cut = _cut_one(inp, kind)
                if cut is not None:
                    break
        if cut is None:
            report.over = over
            break
        report.cuts.append(cut)
    specialized = None
    if specialized_step:
        inp.tools = tools_text
        specialized = builder.specialized(specialized_step, inp) if tools_text else texts["specialized"]
        if tools_text:
            report.tokens["tools"] = counter(tools_text) if counter is not None else _fits(tools_text, 10**9, bounds)  # reported only: a bound will do
    if project:
        report.tokens["project"] = project
    report.exact = report.exact and not bounds
    return BuiltPrompts(texts["base"], texts["main"], specialized, report)
