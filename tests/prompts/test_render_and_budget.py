"""Three-layer prompts (en/ja, persona → policy → overlay) and the per-layer token budget."""

from __future__ import annotations

from pathlib import Path

from duckflow.llm.tokens import count_tokens
from duckflow.prompts.budget import LayerBudget, build_prompts
from duckflow.prompts.render import (
    BASE_FIXED_MAX,
    PromptBuilder,
    PromptInputs,
    read_workspace_persona,
)


def _inputs() -> PromptInputs:
    return PromptInputs(
        session_id="s1", goal="add a greeting", constraints=["no network"],
        plan_brief=["write hello.py", "run it", "review"], open_questions=["Which name?", "Tests?"],
        summaries=[f"U: message {i} / A: reply {i}" for i in range(5)],
        recent_turns=["U: a / A: b"], evidence=[f"read_file f{i}.py → ok: " + "x" * 200 for i in range(5)],
        allowed=["EXECUTION", "REVIEW"],
    )


def test_base_order_is_persona_policy_overlay_and_fixed_part_fits() -> None:
    for lang in ("en", "ja"):
        b = PromptBuilder(lang)  # type: ignore[arg-type]
        base = b.base(_inputs())
        assert base.index(b.persona) < base.index(b.policy) < base.index("s1")
        assert len(b.fixed_base) <= BASE_FIXED_MAX
    assert "固定5項目" not in PromptBuilder("ja").main(_inputs())  # template-driven, not code
    assert "目標: add a greeting" in PromptBuilder("ja").main(_inputs())


def test_workspace_persona_is_read_first_and_clipped_visibly(tmp_path: Path) -> None:
    (tmp_path / "CHAT_PERSONA.md").write_text("You are Quack, terse.\n", encoding="utf-8")
    b = PromptBuilder("en", read_workspace_persona(tmp_path))
    assert b.base(_inputs()).startswith("You are Quack, terse.")
    long = PromptBuilder("en", "p" * 5000)
    assert len(long.fixed_base) <= BASE_FIXED_MAX and long.persona.endswith("…") and long.notes


def test_main_holds_fixed_five_and_decision_spec() -> None:
    main = PromptBuilder("en").main(_inputs())
    for needle in ("Goal: add a greeting", "Constraints: no network", "1. write hello.py",
                   "Which name?", '"prompt_pattern"', "Steps allowed from PLANNING: EXECUTION, REVIEW"):
        assert needle in main


def test_specialized_layers_differ_per_step() -> None:
    b = PromptBuilder("en")
    texts = {s: b.specialized(s, _inputs()) for s in ("PLANNING", "EXECUTION", "REVIEW")}
    assert texts["PLANNING"].startswith("# Planning") and texts["REVIEW"].startswith("# Review")
    assert len(set(texts.values())) == 3


def test_budget_cuts_in_fixed_order_evidence_conversation_questions_plan() -> None:
    b = PromptBuilder("en")
    inp = _inputs()
    full = build_prompts(b, inp, LayerBudget(10_000, 10_000, 10_000))
    assert full.report.cuts == []
    assert full.report.tokens["main"] >= count_tokens(full.main).tokens  # a bound proving the fit
    main_tokens = count_tokens(full.main).tokens
    # tight enough that everything cuttable in Main must go
    tight = build_prompts(b, inp, LayerBudget(10_000, main_tokens - 200, 10_000))
    kinds = [c.split(":")[0] for c in tight.report.cuts]
    order = ["evidence", "recent turn", "open question", "plan step"]
    seen = [k for k in order if k in kinds]
    assert seen and [kinds.index(k) for k in seen] == sorted(kinds.index(k) for k in seen)
    assert kinds[:5] == ["evidence"] * 5
    assert tight.report.tokens["main"] <= main_tokens - 200 or tight.report.over
    # inputs are not mutated by the budget: every list it cut was its own copy
    assert len(inp.evidence) == 5 and inp == _inputs()
    copied = inp.copy()
    assert copied == inp and all(getattr(copied, k) is not getattr(inp, k) for k in
                                 ("summaries", "plan_brief", "open_questions", "recent_turns", "evidence",
                                  "past_sessions"))


def test_budget_reports_what_is_still_over() -> None:
    b = PromptBuilder("en")
    r = build_prompts(b, _inputs(), LayerBudget(50, 50, 50), specialized_step="EXECUTION")
    assert r.report.over and "base" in r.report.over
    assert r.report.exact  # the real tokenizer is available offline


def test_codec_tool_instructions_are_reported_apart_not_cut_against() -> None:
    b = PromptBuilder("en")
    inp = _inputs()
    inp.tools = "TOOLS: " + "read_file(path) " * 600
    r = build_prompts(b, inp, LayerBudget(10_000, 10_000, 1200), specialized_step="EXECUTION")
    assert r.report.cuts == [] and r.report.tokens["tools"] > 1200
    assert r.specialized is not None and r.specialized.rstrip().endswith("read_file(path)")
