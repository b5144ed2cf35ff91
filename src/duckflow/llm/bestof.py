"""Best of a few: `n` candidate replies of a model (other seeds), the one a checker scores highest.

`BestOfModel(model, n, score)` asks `model` `n` times for the same messages: the first
candidate with the caller's settings, the others at `temperature` (0.7) with seeds `seed+1`,
`seed+2` … so they differ. `score(text)` is the caller's check that needs no person (for a
coding step: the reply parses, its edits apply, it names the task's file; see
`bench/_bestof.py`); the highest score wins, the earliest on a tie, and its text is streamed as
one piece after a `writing` progress event per candidate. Usage is the sum over the candidates
(that is what the wait cost). `last_scores` keeps the scores of the last call.

Each candidate costs a full generation, so on a small machine the wall time grows about `n`×;
whether that pays is measured, not assumed (docs/benchmarks.md); it is not a default.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence

from duckflow.llm.types import (
    Collector,
    FinishEvent,
    Message,
    Model,
    ModelEvent,
    ModelSettings,
    ProgressEvent,
    TextDelta,
    ToolSpec,
    Usage,
    UsageEvent,
)

Score = Callable[[str], float]


class BestOfModel:
    """`inner` asked `n` times per call; the reply `score` rates highest is the answer."""

    def __init__(self, inner: Model, n: int, score: Score, *, temperature: float = 0.7) -> None:
        self.models = [inner]
        self.name = inner.name
        self.supports_tools = inner.supports_tools
        self.is_local = inner.is_local
        self.n = max(1, n)
        self.score = score
        self.temperature = temperature
        self.last_scores: list[float] = []

    def _settings(self, settings: ModelSettings | None, i: int) -> ModelSettings | None:
        if i == 0:
            return settings
        base = settings or ModelSettings()
        seed = int(base.extra.get("seed", 0)) + i
        return ModelSettings(temperature=self.temperature, max_tokens=base.max_tokens,
                             timeout_s=base.timeout_s, extra={**base.extra, "seed": seed})

    async def stream(self, messages: Sequence[Message], *, tools: Sequence[ToolSpec] = (),
                     settings: ModelSettings | None = None) -> AsyncIterator[ModelEvent]:
        best: Collector | None = None
        best_score = float("-inf")
        usage = Usage()
        self.last_scores = []
        for i in range(self.n):
            got = Collector()
            async for ev in self.models[0].stream(messages, tools=tools, settings=self._settings(settings, i)):
                if isinstance(ev, ProgressEvent):
                    if ev.stage == "writing":
                        ev = ProgressEvent("writing", f"writing candidate {i + 1} of {self.n}")
                    yield ev
                    continue
                got.add(ev)
            usage = usage + (got.usage or Usage())
            score = self.score(got.text)
            self.last_scores.append(score)
            if score > best_score:
                best, best_score = got, score
        assert best is not None
        if best.text:
            yield TextDelta(best.text)
        yield UsageEvent(usage)
        yield FinishEvent(best.reason)
