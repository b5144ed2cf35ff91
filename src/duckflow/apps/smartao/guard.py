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
from duckflow.apps.smartao.text import line_col, normalize_mapped, shingle_size, shingles

Verdict = Literal["pass", "warn", "block"]
WARN_AT = 0.28
BLOCK_AT = 0.4


@dataclass(frozen=True)
class Passage:
    """Text of the essay, as it stands there, that also appears in a reference."""

    text: str
    line: int
    ref_line: int
    start: int

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "line": self.line, "ref_line": self.ref_line}


@dataclass(frozen=True)
class Match:
    ref: str
    score: float
    passages: tuple[Passage, ...] = ()


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
                "matches": [{"ref": m.ref, "score": round(m.score, 4),
                             "passages": [p.to_dict() for p in m.passages]} for m in self.matches],
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
    by_path = {r.path: r for r in refs}
    shown = [Match(m.ref, m.score, tuple(passages(text, by_path[m.ref].text, size))) for m in scored[:top]]
    return PlagiarismResult(best, verdict_for(best, warn_at, block_at), shown, warn_at, block_at, size)


def passages(essay: str, ref: str, size: int) -> list[Passage]:
    """The runs of the essay covered by shingles of `ref` (at least three shingles' length: a
    shorter run is a common phrase like "I want to study"), each as the essay's own text with
    its line, and the line of `ref` where it starts."""
    norm, where = normalize_mapped(essay)
    rnorm, rwhere = normalize_mapped(ref)
    theirs = {rnorm[i:i + size] for i in range(len(rnorm) - size + 1)}
    covered = [False] * len(norm)
    for i in range(len(norm) - size + 1):
        if norm[i:i + size] in theirs:
            covered[i:i + size] = [True] * size
    out: list[Passage] = []
    i = 0
    while i < len(norm):
        if not covered[i]:
            i += 1
            continue
        j = i
        while j < len(norm) and covered[j]:
            j += 1
        if j - i >= 3 * size:
            start, end = where[i], where[j - 1] + 1
            while start < end and not essay[start].isalnum():  # the space a full stop became
                start += 1
            while end > start and essay[end - 1].isspace():
                end -= 1
            k = next(x for x in range(i, j) if where[x] >= start)
            at = rnorm.find(norm[k:k + size])
            ref_line = line_col(ref, rwhere[at])[0] if at >= 0 else 0
            out.append(Passage(essay[start:end], line_col(essay, start)[0], ref_line, start))
        i = j
    return out


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
