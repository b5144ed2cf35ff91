"""The quiet line that ends a turn: how long it took, the tokens in and out, tokens per second, and
where the time went when it was long — made from the Chunk stream (channels/present.py shows it).

    12.4 s · 505 tokens in, 286 out · 23 tokens/s · answered by openai:gpt-4o-mini
    2 min 56 s · 505 tokens in, 286 out · 2.1 tokens/s · loading 4 s, reading the prompt 35 s, writing 2 min 14 s, running checks 3 s · answered by local:default

Time comes from the chunks' own stamps: a model call from its `progress` start to its end, split by
the stages a local model reports (loading, reading the prompt, writing); a tool from its call to its
result. Tokens are the `usage` chunks' (the provider's count, or ours when it gives none), and so
are the names of the models that answered, said last: the person is told which model answered
(a role of the orchestra that answered says it with an `answered_by` notice: then the line may be
only "answered by ollama:chat-v1"). `answered` keeps the last turn's names for chat channels.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

LONG_S = 20.0  # a turn longer than this says where its time went
STAGES = {"loading": "loading", "prompt": "reading the prompt", "writing": "writing", "model": "the model",
          "tools": "running tools and checks"}


def _at(chunk: Any) -> float | None:
    try:
        return datetime.fromisoformat(str(chunk.time).replace("Z", "+00:00")).timestamp()
    except (TypeError, ValueError):
        return None


def duration(seconds: float) -> str:
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    return f"{int(seconds // 60)} min {int(seconds % 60)} s"


class TurnClock:
    """Adds up one turn from its chunks; `feed` returns the end line when the turn's `done` arrives."""

    def __init__(self) -> None:
        self.answered = ""  # "answered by …" of the last turn that ended ('' when no model answered)
        self.reset()

    def reset(self) -> None:
        self.started: float | None = None
        self.spent: dict[str, float] = {}
        self.open: tuple[str, float] | None = None  # the stage being timed, since when
        self.tools_since: float | None = None
        self.tokens_in = self.tokens_out = 0
        self.calls = 0
        self.models: list[str] = []  # which models answered (the person is told)

    def _close(self, now: float) -> None:
        if self.open is not None:
            stage, since = self.open
            self.spent[stage] = self.spent.get(stage, 0.0) + max(0.0, now - since)
            self.open = None

    def feed(self, chunk: Any) -> str | None:
        now = _at(chunk)
        if now is None:
            return None
        if self.started is None:
            self.started = now
        kind, d = getattr(chunk, "type", ""), chunk.data
        if kind == "progress" and d.what.startswith("asking ") or kind == "progress" and d.stage:
            if d.phase == "start":
                self._close(now)
                self.open = (d.stage if d.stage in STAGES else "model", now)
                self.calls += 1 if not d.stage else 0
            else:
                self._close(now)
        elif kind == "tool_call":
            self.tools_since = now
        elif kind == "tool_response" and self.tools_since is not None:
            self.spent["tools"] = self.spent.get("tools", 0.0) + max(0.0, now - self.tools_since)
            self.tools_since = None
        elif kind == "usage":
            self.tokens_in += int(d.prompt_tokens or 0)
            self.tokens_out += int(d.completion_tokens or 0)
            if d.model and d.model not in self.models:
                self.models.append(str(d.model))
        elif kind == "notice" and d.code == "answered_by":
            for name in d.details.get("models") or []:
                if name and name not in self.models:
                    self.models.append(str(name))
        elif kind == "done":
            said = self.line(now)
            self.answered = f"answered by {' + '.join(self.models)}" if self.models and said else ""
            self.reset()
            return said
        return None

    def line(self, now: float) -> str | None:
        self._close(now)
        if not self.calls or self.started is None or not (self.tokens_in or self.tokens_out):
            # no model call of the companion: a role's answer names its model; else (a command, a
            # refusal, a model that is down) there is nothing to add up
            return f"answered by {' + '.join(self.models)}" if self.models else None
        total = max(0.0, now - self.started)
        writing = self.spent.get("writing") or self.spent.get("model") or 0.0
        parts = [duration(total), f"{self.tokens_in:,} tokens in, {self.tokens_out:,} out"]
        if writing > 0.05 and self.tokens_out:
            rate = self.tokens_out / writing
            parts.append(f"{rate:.1f} tokens/s" if rate < 10 else f"{rate:.0f} tokens/s")
        if total >= LONG_S:
            where = [f"{STAGES[k]} {duration(v)}" for k, v in self.spent.items() if v >= 0.5]
            if where:
                parts.append(", ".join(where))
        if self.models:
            parts.append("answered by " + " + ".join(self.models))
        return " · ".join(parts)
