"""The four-phase processor of seed 000 §3.1: strict -> repair -> fuzzy (-> self-correct).

`parse(text, request=None)` is the one-shot entry point. Confidence is the product of named
penalties, one per repair or warning (each name counted at most three times), so a reader can
see exactly why a result is less certain. Self-correction needs a model and lives in
`corrector.py`; `RobustProcessor` and `DebugProcessor` wrap this one.
"""

from __future__ import annotations

from functools import lru_cache

from duckflow.protocols.symops.fuzzy import FuzzyParser
from duckflow.protocols.symops.model import Issue, Repair, SymOpsResult
from duckflow.protocols.symops.repair import AutoRepair, RepairOutput
from duckflow.protocols.symops.scanner import strict_scan
from duckflow.protocols.symops.serializer import wrapped_in_fence
from duckflow.protocols.symops.validator import validate

# name -> penalty (confidence is multiplied by 1 - penalty)
PENALTIES: dict[str, float] = {
    "crlf_line_endings": 0.0, "thinking_removed": 0.0, "common_indent_removed": 0.02,
    "unwrapped_reply_fence": 0.02, "prose_as_thought": 0.01, "line_decoration": 0.03,
    "indented_protocol_line": 0.02, "missing_at": 0.05, "colon_for_at": 0.04,
    "decorated_target": 0.03, "markdown_fence_block": 0.03, "blank_before_block": 0.01,
    "indented_block": 0.03, "vitals_format": 0.01, "markdown_rule_dropped": 0.01,
    "stray_delimiter": 0.05, "unreadable_action": 0.2, "orphan_code_block": 0.1,
    "missing_action_symbol": 0.4, "missing_symbols": 0.15, "action_in_block": 0.4, "truncated_block": 0.5, "mismatched_block_close": 0.4,
    "ambiguous_block_close": 0.4, "missing_block_close": 0.5, "orphan_block": 0.5, "path_from_fence": 0.4,
    "path_from_prose": 0.5, "path_from_block_head": 0.45, "path_from_request": 0.6, "prose_mention": 0.6,
    "unknown_action_type": 0.02, "path_outside_workspace": 0.1, "vital_out_of_range": 0.02,
    "missing_content": 0.3, "missing_target": 0.3, "incomplete_hunk": 0.4,
    "fence_inside_block": 0.03, "target_annotation": 0.03, "target_punctuation": 0.03, "full_width_symbols": 0.02,
    "shell_prompt_line": 0.0, "fence_with_language": 0.03, "unsupported_diff": 0.3,
    "unclosed_block": 0.0, "undeclared_action": 0.0, "mismatched_block": 0.0,
    "ambiguous_block": 0.0, "no_protocol": 1.0, "empty_reply": 1.0,
}  # fmt: skip
DEFAULT_PENALTY = 0.1
WARNING_NAMES = frozenset({
    "orphan_code_block", "missing_action_symbol", "truncated_block", "mismatched_block_close",
    "missing_block_close", "action_in_block",
    "ambiguous_block_close", "stray_delimiter", "unreadable_action",
})  # fmt: skip


def score(names: list[str]) -> float:
    """Confidence left after the named penalties (each name counted at most three times)."""
    if not names:
        return 1.0
    return _score(tuple(names))


@lru_cache(maxsize=1024)
def _score(names: tuple[str, ...]) -> float:
    seen: dict[str, int] = {}
    conf = 1.0
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        if seen[name] <= 3:
            conf *= 1.0 - PENALTIES.get(name, DEFAULT_PENALTY)
    return max(0.0, min(1.0, conf))


def _unfence_blocks(result: SymOpsResult) -> None:
    """A `--` block whose whole content is one markdown fence, for a code file: the fence goes.

    `$ create @ a.py` / `--` / "```python" ... "```" / `--` would otherwise write the fences
    into a Python file. Files where fences are plausible content (.md, .txt, ...) keep them,
    and so does any block with a longer fence (`---`), which the serializer uses for such text.
    """
    for a in result.actions:
        if a.fence == 2 and a.content is not None and wrapped_in_fence(a.type, a.path, a.content):
            first, _, rest = a.content.partition("\n")
            a.content = rest.rpartition("\n")[0]
            a.confidence *= 1.0 - PENALTIES["fence_inside_block"]
            result.repairs.append(Repair("fence_inside_block", a.line, first.strip()))
            if result.stage == "strict":
                result.stage = "repaired"


def _finish(result: SymOpsResult, rep: RepairOutput | None) -> SymOpsResult:
    _unfence_blocks(result)
    validate(result)
    names = [r.name for r in result.repairs] + [w.name for w in result.warnings]
    names += [i.kind for i in result.issues]
    for a in result.actions:
        if a.guess is None and not a.executable:
            a.confidence = min(a.confidence, 0.5)
    result.confidence = score(names)
    if result.stage == "fuzzy":
        result.confidence = min(result.confidence, 0.5)
    if result.stage == "failed":
        result.confidence = 0.0
    return result


def _has_protocol(result: SymOpsResult, prose_lines: int) -> bool:
    return bool(
        result.actions or result.questions or result.notes or result.vitals
        or len(result.thoughts) > prose_lines
    )  # fmt: skip


class SymOpsProcessor:
    """strict parse; else AutoRepair + strict parse of the repaired text; else FuzzyParser."""

    def __init__(self) -> None:
        self.repairer = AutoRepair()
        self.fuzzy = FuzzyParser()

    def strict(self, text: str) -> SymOpsResult | None:
        """The strict reading, or None when the text departs from the grammar anywhere."""
        sc = strict_scan(text, stop_early=True)
        if sc.violations:
            return None
        return finish_strict(sc.result, text)

    def process(self, text: str, request: str | None = None) -> SymOpsResult:
        strict = self.strict(text)
        if strict is not None:
            return strict
        rep = AutoRepair().repair(text)
        return self.from_repair(rep, request)

    def from_repair(self, rep: RepairOutput, request: str | None = None) -> SymOpsResult:
        sc = strict_scan(rep.text)  # the repaired text is canonical
        result, violations = sc.result, sc.violations
        lm = rep.line_map

        def orig(line: int) -> int:
            return lm[line - 1] if 0 < line <= len(lm) else line

        for v in violations:  # should not happen: the repaired text is canonical
            v.line = orig(v.line)
            result.issues.append(v)
        for a in result.actions:
            idx = a.line - 1
            names = rep.action_repairs.get(idx, [])
            a.confidence = score(names)
            if idx in rep.guesses:
                a.guess = rep.guesses[idx]
                a.executable = False
            a.line = orig(a.line)
        for r in rep.repairs:
            (result.warnings if r.name in WARNING_NAMES else result.repairs).append(r)
        result.text = "".join(t + "\n" for _, t in rep.prose)
        guessed, warns = self.fuzzy.guess(rep, result.actions, request)
        result.actions.extend(guessed)
        result.warnings.extend(warns)
        if guessed:
            result.stage = "fuzzy"
        elif _has_protocol(result, len(rep.prose)):
            result.stage = "repaired"
        else:
            result.stage = "failed"
            result.issues.append(Issue("no_protocol", 1, "no Sym-Ops lines or actions were found",
                                       "`~` thoughts and `$ verb @ path` actions"))  # fmt: skip
        return _finish(result, rep)


def finish_strict(result: SymOpsResult, text: str) -> SymOpsResult:
    """Validate and score a result the strict scanner read without any violation."""
    if not text or text.isspace():
        result.stage = "failed"
        result.issues.append(Issue("empty_reply", 1, "the reply is empty", "Sym-Ops lines"))
    return _finish(result, None)


def process_repaired(text: str, request: str | None = None) -> SymOpsResult:
    """The pipeline after a failed strict read: AutoRepair, strict read of the repair, fuzzy."""
    return _DEFAULT.from_repair(AutoRepair().repair(text), request)


_DEFAULT = SymOpsProcessor()


def parse(text: str, *, request: str | None = None) -> SymOpsResult:
    """Read one reply: strict when it is canonical, else repaired, else fuzzy, else failed."""
    return _DEFAULT.process(text, request)


def repair_text(text: str) -> tuple[str, list[Repair]]:
    """The repaired text and its repairs (what `duckflow protocol repair` prints)."""
    rep = AutoRepair().repair(text)
    return rep.text, rep.repairs
