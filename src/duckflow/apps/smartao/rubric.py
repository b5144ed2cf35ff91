"""Rubrics and EvalAgent: a rubric JSON (criteria, weights, levels), cached; scores with reasons.

A rubric file is parsed once per content: the cache is keyed by the file's sha256 (and
remembers path+mtime+size to skip re-reading an unchanged file), and `hits`/`misses` say how it
did. An evaluation asks the model for one level and a reason per criterion; the answer must
name every criterion exactly once with a level the rubric defines, or it is refused (after one
re-ask) — a missing score is never filled in. The total is the weighted mean of level/max, ×100.

Each score carries a reason (what the essay shows) and `to_next` (what it must add to reach the
next level); a reason that only repeats the essay's own words is refused and re-asked. The
style rules (`grammar_check`) feed the expression criterion: their findings go into the prompt,
and they cap its level (1-2 findings: one below the top, 3 or more: two below). While the
answer streams, `log.progress` hears which criterion the model is on.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from duckflow.apps.smartao.ask import AgentLog, EssayError, ask_json, json_settings
from duckflow.apps.smartao.text import language


class Level(BaseModel):
    score: int = Field(ge=0, le=100)
    description: str


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


class Rubric(BaseModel):
    name: str
    criteria: list[Criterion] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> Rubric:
        ids = [c.id for c in self.criteria]
        if len(set(ids)) != len(ids):
            raise ValueError("criterion ids must be unique")
        return self

    def prompt_text(self) -> str:
        lines = [f"Rubric: {self.name}"]
        for c in self.criteria:
            lines.append(f"- {c.id} ({c.name}, weight {c.weight:g}): " +
                         "; ".join(f"{lv.score} = {lv.description}" for lv in sorted(c.levels, key=lambda x: x.score)))
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


class _Score(BaseModel):
    criterion: str
    level: int
    reason: str = Field(min_length=3, max_length=400)
    to_next: str = Field(default="", max_length=400)

    @field_validator("criterion", mode="before")
    @classmethod
    def _id(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value  # "Motivation" is motivation


class _Scores(BaseModel):
    scores: list[_Score]


def scores_schema(rubric: Rubric) -> type[_Scores]:
    """The answer's model for this rubric: criterion ids and levels as enums, one entry per
    criterion — so a constrained decoder can only write ids and levels the rubric defines."""
    from typing import Literal

    from pydantic import create_model

    ids = tuple(c.id for c in rubric.criteria)
    levels = tuple(sorted({lv.score for c in rubric.criteria for lv in c.levels}))
    criterion_t: Any = Literal[ids]
    level_t: Any = Literal[levels]
    score: Any = create_model("RubricScore", __base__=_Score, criterion=(criterion_t, ...),
                              level=(level_t, ...), reason=(str, Field(min_length=3, max_length=200)),
                              to_next=(str, Field(max_length=200)))
    n = len(ids)
    items_t: Any = list[score]
    model: type[_Scores] = create_model("RubricScores", __base__=_Scores,
                                        scores=(items_t, Field(min_length=n, max_length=n)))
    return model


@dataclass
class Evaluation:
    rubric: str
    rubric_sha: str
    scores: list[dict[str, Any]]
    total: float
    cached: bool = False
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"rubric": self.rubric, "total": round(self.total, 1), "scores": self.scores,
                "cached": self.cached}


def echoes(reason: str, essay: str) -> bool:
    """True when `reason` is (almost) only the essay's own words: at least 70% of its shingles
    occur in the essay (a quoted phrase inside a real judgement stays well below)."""
    from duckflow.apps.smartao.text import shingle_size, shingles

    size = shingle_size(essay)
    mine = shingles(reason, size)
    if not mine or len(mine) < 3:
        return False
    return len(mine & shingles(essay, size)) >= 0.7 * len(mine)


def check_scores(rubric: Rubric, answer: _Scores, essay: str = "") -> list[str]:
    """Why an answer is unusable (empty list: usable)."""
    errors: list[str] = []
    by_id = {c.id: c for c in rubric.criteria}
    seen: set[str] = set()
    for s in answer.scores:
        c = by_id.get(s.criterion)
        if c is None:
            errors.append(f"unknown criterion {s.criterion!r} (expected one of {', '.join(by_id)})")
            continue
        if s.criterion in seen:
            errors.append(f"criterion {s.criterion!r} scored twice")
        seen.add(s.criterion)
        allowed = sorted(lv.score for lv in c.levels)
        if s.level not in allowed:
            errors.append(f"level {s.level} for {s.criterion!r} is not one of {allowed}")
        elif s.level < c.max_score and len(s.to_next.strip()) < 3:
            errors.append(f"to_next for {s.criterion!r} is empty: say what the essay must add to reach "
                          f"level {min(x for x in allowed if x > s.level)}")
        if s.reason.strip().lower() in ("reason", "why", "...", "one line", "理由"):
            errors.append(f"the reason for {s.criterion!r} is a placeholder")
        elif essay and echoes(s.reason, essay):
            errors.append(f"the reason for {s.criterion!r} only repeats the essay: judge it against the "
                          "rubric's level descriptions in your own words")
        if essay and s.to_next and echoes(s.to_next, essay):
            errors.append(f"to_next for {s.criterion!r} only repeats the essay: say what is missing")
    said: dict[str, str] = {}
    for s in answer.scores:  # one reason pasted under every criterion judges none of them
        key = s.reason.lower()
        for cid in by_id:  # "...in the motivation statement" / "...in the evidence statement"
            key = key.replace(cid.lower(), "")
        key = " ".join(key.split())
        if key in said and said[key] != s.criterion:
            errors.append(f"the reason for {s.criterion!r} is the one given for {said[key]!r}: judge each "
                          "criterion on its own against its levels")
        said.setdefault(key, s.criterion)
    missing = [cid for cid in by_id if cid not in seen]
    if missing:
        errors.append("missing criteria: " + ", ".join(missing))
    return errors


def expression_cap(rubric: Rubric, criterion: Criterion, findings: int) -> int | None:
    """The highest level the expression criterion may get with `findings` rule findings."""
    if findings == 0 or not is_expression(criterion):
        return None
    levels = sorted(lv.score for lv in criterion.levels)
    return levels[max(0, len(levels) - (2 if findings <= 2 else 3))]


def is_expression(c: Criterion) -> bool:
    return c.id == "expression" or "expression" in c.name.lower() or "表現" in c.name


def _watch_criteria(log: AgentLog, rubric: Rubric) -> Any:
    """Wrap `log.on_chunk` so that `log.progress` hears each criterion as the answer streams."""
    import re

    say, base = log.progress, log.on_chunk
    assert say is not None
    ids = [c.id for c in rubric.criteria]
    seen: list[str] = []
    streamed: list[str] = []
    pattern = re.compile(r'"criterion"\s*:\s*"([^"]+)"')
    say(f"reading the essay against {len(ids)} criteria…")

    def on_chunk(chunk: Any) -> None:
        base(chunk)
        kind = getattr(chunk, "type", "")
        if kind == "done":  # a re-ask streams a new answer: count its criteria again
            seen.clear()
            streamed.clear()
        if kind != "delta":
            return
        streamed.append(getattr(chunk.data, "text", "") or "")
        for m in pattern.finditer("".join(streamed[-40:]) if len(streamed) > 40 else "".join(streamed)):
            cid = m.group(1).strip().lower()
            if cid in ids and cid not in seen:
                seen.append(cid)
                say(f"criterion {len(seen)} of {len(ids)} ({cid})…")

    return on_chunk


def total_score(rubric: Rubric, scores: dict[str, int]) -> float:
    weight = sum(c.weight for c in rubric.criteria)
    return 100.0 * sum(c.weight * scores[c.id] / c.max_score for c in rubric.criteria) / weight


class EvalAgent:
    name = "EvalAgent"

    def __init__(self, model: Any, *, token_guard: Any = None, store: Any = None) -> None:
        self.model, self.token_guard, self.store = model, token_guard, store

    async def run(self, text: str, rubric_path: str | Path = DEFAULT_RUBRIC, *, session: str,
                  log: AgentLog, essay_id: str = "") -> Evaluation:
        from duckflow.core.agent import Agent

        rubric, sha = RUBRICS.load(rubric_path)
        essay_sha = hashlib.sha256(text.encode()).hexdigest()
        model_name = str(getattr(self.model, "name", self.model))
        if self.store is not None:
            cached = self.store.cached_evaluation(sha, essay_sha, model_name)
            if cached is not None:
                return Evaluation(rubric.name, sha, cached["scores"], cached["total"], cached=True)
        from duckflow.apps.smartao.style import grammar_check

        lang = language(text)
        findings = grammar_check(text, lang)
        from duckflow.core.prompt_library import PromptLibrary

        system = PromptLibrary("duckflow.apps.smartao").get("eval.system", lang)  # prompts/<lang>.toml
        agent = Agent(self.name, system, model=self.model,
                      settings=json_settings(self.model, scores_schema(rubric), 100 + 160 * len(rubric.criteria),
                                             temperature=0.0),
                      token_guard=self.token_guard, max_turns=1)
        checks = ""
        if findings:
            listed = "; ".join(f"line {text.count(chr(10), 0, f.start) + 1}: {f.message}" for f in findings[:8])
            checks = (f"\n\nA rule-based check found {len(findings)} mechanical error(s) (count them under "
                      f"expression): {listed}")
        prompt = (rubric.prompt_text() + "\n\nEssay:\n<<<\n" + text + "\n>>>" + checks + "\n"
                  'Answer as {"scores": [{"criterion": <id>, "level": <number>, "reason": <sentence>, '
                  '"to_next": <what to add>}]} with one entry for each of: '
                  + ", ".join(c.id for c in rubric.criteria) + ".")
        saved = log.on_chunk
        if log.progress is not None:
            log.on_chunk = _watch_criteria(log, rubric)  # type: ignore[method-assign]
        try:
            answer = await ask_json(agent, prompt, _Scores, session=session, log=log,
                                    check=lambda a: check_scores(rubric, a, text))  # tolerant read, exact check
        finally:
            log.on_chunk = saved  # type: ignore[method-assign]
        scores: list[dict[str, Any]] = []
        for c in rubric.criteria:
            got = next(s for s in answer.scores if s.criterion == c.id)
            level, reason, to_next = got.level, got.reason, got.to_next
            cap = expression_cap(rubric, c, len(findings))
            if cap is not None and level > cap:
                first = findings[0]
                reason += (f" (at most level {cap}: the style check found {len(findings)} mechanical "
                           f"error(s), e.g. line {text.count(chr(10), 0, first.start) + 1}: {first.message})")
                to_next = f"fix the {len(findings)} error(s) `duckflow essay style` lists. " + to_next
                level = cap
            scores.append({"criterion": c.id, "name": c.name, "level": level, "max": c.max_score,
                           "weight": c.weight, "reason": reason, "to_next": to_next.strip()})
        levels = {str(s["criterion"]): int(s["level"]) for s in scores}
        ev = Evaluation(rubric.name, sha, scores, total_score(rubric, levels))
        if self.store is not None:
            self.store.save_evaluation(essay_id or essay_sha, essay_sha, sha, model_name, ev)
        return ev
