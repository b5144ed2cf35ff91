"""RobustProcessor (seed 000 §5.3) and DebugProcessor (§8.2): fallbacks, and a look inside.

RobustProcessor tries strict -> auto repair -> fuzzy -> self-correction (when a `complete`
callable is given) -> manual extraction, and says which strategy produced the result.
Departure from the seed: manual extraction never invents names like `file_0.py`; blocks it
finds have `path=None` and are never executable.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TextIO

from duckflow.llm.types import Message
from duckflow.protocols.symops.corrector import Attempt, Complete, SelfCorrector
from duckflow.protocols.symops.model import Action, Repair, SymOpsResult
from duckflow.protocols.symops.processor import SymOpsProcessor, parse
from duckflow.protocols.symops.repair import AutoRepair
from duckflow.protocols.symops.scanner import strict_scan

_CODE = re.compile(r"```[^\n`]*\n(.*?)```", re.S)
STAGE_STRATEGY = {"strict": "strict_parse", "repaired": "auto_repair", "fuzzy": "fuzzy_parse"}


@dataclass
class RobustOutcome:
    """`strategy`: strict_parse | auto_repair | fuzzy_parse | self_correct | manual_extraction | none."""

    result: SymOpsResult
    strategy: str
    success: bool
    raw_output: str
    attempts: list[Attempt] = field(default_factory=list)


def manual_extraction(text: str) -> list[Action]:
    """Every fenced code block as a proposed action with no path (never executable)."""
    return [
        Action("create", "create", None, m.group(1).rstrip("\n"), None, 0.1, False, None,
               text.count("\n", 0, m.start()) + 1, "orphan_block")  # fmt: skip
        for m in _CODE.finditer(text)
    ]


class RobustProcessor:
    def __init__(self, complete: Complete | None = None, *, request: str | None = None) -> None:
        self.complete = complete
        self.request = request

    def process(self, raw_output: str) -> RobustOutcome:
        """Every strategy that needs no model."""
        result = parse(raw_output, request=self.request)
        if result.ok or result.stage != "failed":
            return RobustOutcome(result, STAGE_STRATEGY.get(result.stage, "none"), result.ok, raw_output)
        return self._manual(raw_output, result, [])

    async def process_with_fallbacks(self, raw_output: str, messages: Sequence[Message] = ()) -> RobustOutcome:
        """All strategies; self-correction re-asks through `complete` when parsing was not ok."""
        result = parse(raw_output, request=self.request)
        if result.ok:
            return RobustOutcome(result, STAGE_STRATEGY[result.stage], True, raw_output)
        attempts: list[Attempt] = []
        if self.complete is not None:
            fix = await SelfCorrector(self.complete, request=self.request).correct(messages, raw_output)
            attempts = fix.attempts
            if fix.result.ok:
                return RobustOutcome(fix.result, "self_correct", True, raw_output, attempts)
        if result.stage != "failed":
            return RobustOutcome(result, STAGE_STRATEGY[result.stage], False, raw_output, attempts)
        return self._manual(raw_output, result, attempts)

    def _manual(self, raw: str, result: SymOpsResult, attempts: list[Attempt]) -> RobustOutcome:
        found = manual_extraction(raw)
        if not found:
            return RobustOutcome(result, "none", False, raw, attempts)
        result.actions = found
        result.warnings.append(Repair("manual_extraction", 1, f"{len(found)} code block(s), no paths"))
        return RobustOutcome(result, "manual_extraction", False, raw, attempts)


class DebugProcessor(SymOpsProcessor):
    """Like SymOpsProcessor, and writes each stage (raw, repaired, strict, fuzzy) to `out`."""

    def __init__(self, out: TextIO | None = None) -> None:
        super().__init__()
        self.out = out if out is not None else sys.stderr
        self.log: list[tuple[str, str]] = []

    def _show(self, title: str, body: str) -> None:
        self.log.append((title, body))
        self.out.write(f"=== {title} ===\n{body}{'' if body.endswith(chr(10)) else chr(10)}\n")

    def process(self, text: str, request: str | None = None) -> SymOpsResult:
        self._show("RAW OUTPUT", text)
        sc = strict_scan(text)
        if not sc.violations:
            self._show("STRICT PARSE: SUCCESS", "")
        else:
            self._show("STRICT PARSE: FAILED", "\n".join(v.describe() for v in sc.violations[:20]))
            rep = AutoRepair().repair(text)
            self._show("AFTER REPAIR", rep.text)
            self._show("REPAIRS", "\n".join(f"line {r.line}: {r.name} {r.detail}".rstrip() for r in rep.repairs))
        result = super().process(text, request)
        acts = "\n".join(f"{a.type} @ {a.path} executable={a.executable} confidence={a.confidence:.2f}"
                         + (f" guess={a.guess}" if a.guess else "") for a in result.actions)  # fmt: skip
        self._show(f"RESULT: stage={result.stage} ok={result.ok} confidence={result.confidence:.2f}", acts)
        return result
