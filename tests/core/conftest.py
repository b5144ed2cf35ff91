"""Shared helpers for the engine tests: a recording trace and a tiny text codec."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from duckflow.core.chunks import AnyChunk
from duckflow.llm.types import ToolCall, ToolResult, ToolSpec
from duckflow.protocols.codec import Decoded


class RecordingTrace:
    """Keeps every trace event in memory, in order."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def emit(self, event: str, *, session: str = "", agent: str = "", **fields: Any) -> None:
        self.events.append({"event": event, "session": session, "agent": agent, **fields})

    def names(self) -> list[str]:
        return [e["event"] for e in self.events]


class LineCodec:
    """A minimal text codec: `CALL name {json}` runs a tool, `GUESS name {json}` is a guess."""

    name = "line"
    native = False

    def system_prompt(self, tools: Sequence[ToolSpec]) -> str:
        return "Tools (write CALL name {json}):\n" + "\n".join(t.name for t in tools)

    def decode(self, text: str, tools: Sequence[ToolSpec]) -> Decoded:
        calls, rest, errors = [], [], []
        for line in text.splitlines():
            word, _, tail = line.partition(" ")
            if word in ("CALL", "GUESS"):
                name, _, args = tail.partition(" ")
                try:
                    arguments = json.loads(args or "{}")
                except ValueError:
                    errors.append(f"bad JSON after {name}")
                    continue
                calls.append(ToolCall(name, arguments, executable=word == "CALL",
                                      confidence=1.0 if word == "CALL" else 0.4, source="line"))
            else:
                rest.append(line)
        return Decoded("\n".join(rest).strip(), calls, errors)

    def encode_calls(self, calls: Sequence[ToolCall]) -> str:
        return "\n".join(f"CALL {c.name} {json.dumps(c.arguments)}" for c in calls)

    def encode_results(self, results: Sequence[ToolResult]) -> str:
        return "\n".join(f"RESULT {r.name} {'ERROR ' if r.is_error else ''}{r.content}" for r in results)


def assert_seq_contiguous(chunks: Sequence[AnyChunk], start: int = 1) -> None:
    assert [c.seq for c in chunks] == list(range(start, start + len(chunks)))


@pytest.fixture
def trace() -> RecordingTrace:
    return RecordingTrace()
