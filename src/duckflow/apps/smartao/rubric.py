"""Rubrics: a rubric JSON (criteria, weights, levels), parsed once per content; the Evaluation.

A rubric file is parsed once per content: the cache is keyed by the file's sha256 (and
remembers path+mtime+size to skip re-reading an unchanged file), and `hits`/`misses` say how it
did. A level may carry its description in Japanese (`ja`) for a Japanese essay's questions.
The total is the weighted mean of level/max, ×100, over the criteria that were judged (a
criterion that could not be judged has level None and is never filled in). EvalAgent is in
eval_agent.py.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, model_validator

from duckflow.apps.smartao.ask import EssayError


class Level(BaseModel):
    score: int = Field(ge=0, le=100)
    description: str
    ja: str = ""  # the description in Japanese, for a Japanese essay's prompts

    def describe(self, lang: str) -> str:
        return self.ja if lang == "ja" and self.ja else self.description


class Criterion(BaseModel):
    id: str = Field(pattern=r"^[A-Za-z0-9_-]{1,40}$")
    name: str
    weight: float = Field(gt=0)
    levels: list[Level] = Field(min_length=2)

    @model_validator(mode="after")
    def _distinct(self) -> Criterion:
        scores = [lv.score for lv in self.levels]
        if len(set(scores)) != len(scores):
            raise ValueError(f"criterion {self.id!r} repeats a level score")
        return self

    @property
    def max_score(self) -> int:
        return max(lv.score for lv in self.levels)

    def label(self, lang: str) -> str:
        """The name in the essay's language ("Motivation / 志望動機の明確さ" has both)."""
        parts = [p.strip() for p in self.name.split(" / ")]
        if len(parts) == 2:
            return parts[1] if lang == "ja" else parts[0]
        return self.name

    def levels_text(self, lang: str) -> str:
        return "\n".join(f"{lv.score} = {lv.describe(lang)}" for lv in sorted(self.levels, key=lambda x: x.score))


class Rubric(BaseModel):
    name: str
    criteria: list[Criterion] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> Rubric:
        ids = [c.id for c in self.criteria]
        if len(set(ids)) != len(ids):
            raise ValueError("criterion ids must be unique")
        return self

    def prompt_text(self, lang: str = "en") -> str:
        lines = [f"Rubric: {self.name}"]
        for c in self.criteria:
            lines.append(f"- {c.id} ({c.label(lang)}): " +
                         "; ".join(f"{lv.score} = {lv.describe(lang)}" for lv in sorted(c.levels, key=lambda x: x.score)))
        return "\n".join(lines)


DEFAULT_RUBRIC = Path(__file__).parent / "data" / "ao_rubric.json"


class RubricCache:
    """Parsed rubrics by content hash; a file unchanged since the last read is not re-read."""

    def __init__(self) -> None:
        self._by_sha: dict[str, Rubric] = {}
        self._by_stat: dict[tuple[str, int, int], str] = {}
        self.hits = 0
        self.misses = 0

    def load(self, path: str | Path) -> tuple[Rubric, str]:
        p = Path(path)
        try:
            st = p.stat()
        except OSError as exc:
            raise EssayError(f"rubric not found: {path}", hint="pass --rubric FILE.json") from exc
        key = (str(p.resolve()), st.st_mtime_ns, st.st_size)
        sha = self._by_stat.get(key)
        if sha is not None and sha in self._by_sha:
            self.hits += 1
            return self._by_sha[sha], sha
        raw = p.read_bytes()
        sha = hashlib.sha256(raw).hexdigest()
        self._by_stat[key] = sha
        if sha in self._by_sha:
            self.hits += 1
            return self._by_sha[sha], sha
        self.misses += 1
        try:
            rubric = Rubric.model_validate(json.loads(raw.decode("utf-8")))
        except (ValueError, ValidationError) as exc:
            first = str(exc).splitlines()
            raise EssayError(f"rubric {path} is not valid: {' '.join(first[:3])[:300]}",
                             hint="see docs/smartao.md for the rubric format") from exc
        self._by_sha[sha] = rubric
        return rubric, sha


RUBRICS = RubricCache()


@dataclass
class Evaluation:
    rubric: str
    rubric_sha: str
    scores: list[dict[str, Any]]
    total: float
    cached: bool = False
    notes: list[str] = field(default_factory=list)
    language: str = "en"
    mode: str = "steps"
    stopped: bool = False
    planned: int = 0  # criteria in the rubric (more than `scores` when the run was stopped)

    @property
    def judged(self) -> int:
        return sum(1 for s in self.scores if s.get("level") is not None)

    def to_dict(self) -> dict[str, Any]:
        return {"rubric": self.rubric, "total": round(self.total, 1), "scores": self.scores,
                "cached": self.cached, "language": self.language, "mode": self.mode,
                "judged": self.judged, "criteria": self.planned or len(self.scores), "stopped": self.stopped}


def echoes(reason: str, essay: str) -> bool:
    """True when `reason` is (almost) only the essay's own words: at least 70% of its shingles
    occur in the essay (a quoted phrase inside a real judgement stays well below)."""
    from duckflow.apps.smartao.text import shingle_size, shingles

    size = shingle_size(essay)
    mine = shingles(reason, size)
    if not mine or len(mine) < 3:
        return False
    return len(mine & shingles(essay, size)) >= 0.7 * len(mine)


def is_expression(c: Criterion) -> bool:
    return c.id == "expression" or "expression" in c.name.lower() or "表現" in c.name


def total_score(rubric: Rubric, scores: dict[str, Any]) -> float:
    """The weighted mean of level/max ×100 over the criteria that were judged."""
    judged = [c for c in rubric.criteria if scores.get(c.id) is not None]
    weight = sum(c.weight for c in judged)
    if not weight:
        return 0.0
    return 100.0 * sum(c.weight * scores[c.id] / c.max_score for c in judged) / weight
