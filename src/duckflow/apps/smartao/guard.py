"""GuardAgent: plagiarism check of an essay against a reference corpus with character shingles.

Score of one reference = the share of the essay's shingles found in it (containment: "how
much of this essay appears in that text"); the essay's score is the highest over the corpus.
Verdicts follow seed 004 §4: above `block_at` (0.4) → block, from `warn_at` (0.28) → warn,
else pass. Character n-grams are used because Japanese has no spaces to cut words at.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from duckflow.apps.smartao.refs import Reference
from duckflow.apps.smartao.text import shingle_size, shingles

Verdict = Literal["pass", "warn", "block"]
WARN_AT = 0.28
BLOCK_AT = 0.4


@dataclass(frozen=True)
class Match:
    ref: str
    score: float


@dataclass
class PlagiarismResult:
    score: float
    verdict: Verdict
    matches: list[Match] = field(default_factory=list)
    warn_at: float = WARN_AT
    block_at: float = BLOCK_AT
    shingle_size: int = 8

    def to_dict(self) -> dict[str, Any]:
        return {"score": round(self.score, 4), "verdict": self.verdict,
                "matches": [{"ref": m.ref, "score": round(m.score, 4)} for m in self.matches],
                "thresholds": {"warn": self.warn_at, "block": self.block_at},
                "shingle_size": self.shingle_size}


def verdict_for(score: float, warn_at: float = WARN_AT, block_at: float = BLOCK_AT) -> Verdict:
    if score > block_at:
        return "block"
    if score >= warn_at:
        return "warn"
    return "pass"


def plagiarism_check(text: str, refs: Sequence[Reference], *, warn_at: float = WARN_AT,
                     block_at: float = BLOCK_AT, top: int = 5, n: int | None = None) -> PlagiarismResult:
    """Compare `text` with every reference; the matches list the best `top` with a score above 0."""
    if not 0 <= warn_at <= block_at <= 1:
        raise ValueError(f"thresholds must satisfy 0 <= warn ({warn_at}) <= block ({block_at}) <= 1")
    size = n or shingle_size(text)
    mine = shingles(text, size)
    scored: list[Match] = []
    if mine:
        for ref in refs:
            theirs = shingles(ref.text, size)
            common = len(mine & theirs)
            if common:
                scored.append(Match(ref.path, common / len(mine)))
    scored.sort(key=lambda m: (-m.score, m.ref))
    best = scored[0].score if scored else 0.0
    return PlagiarismResult(best, verdict_for(best, warn_at, block_at), scored[:top], warn_at, block_at, size)


class GuardAgent:
    """Checks drafts against the corpus; `plagiarism_check` is also offered as an engine Tool."""

    name = "GuardAgent"

    def __init__(self, refs: Sequence[Reference], *, warn_at: float = WARN_AT, block_at: float = BLOCK_AT) -> None:
        self.refs = list(refs)
        self.warn_at, self.block_at = warn_at, block_at

    def check(self, text: str) -> PlagiarismResult:
        return plagiarism_check(text, self.refs, warn_at=self.warn_at, block_at=self.block_at)

    def as_tool(self) -> Any:
        from duckflow.core.tools import Tool

        def plagiarism_check_tool(text: str) -> dict[str, Any]:
            """Score how much of `text` appears in the reference corpus (0-1) with a verdict.

            Args:
                text: The essay text to check.
            """
            return self.check(text).to_dict()

        return Tool.from_function(plagiarism_check_tool, name="plagiarism_check")
