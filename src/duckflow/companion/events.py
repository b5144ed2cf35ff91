"""Typed events a companion turn emits for a channel to render (and for the trace).

The engine's Chunk types (core/chunks.py) cover model text, tool calls and results; a
conversation with a gate also needs decisions, transitions, plans and approval requests, so
the companion has its own small set, one `kind` per event. `seq` increases by one per event
within a session.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

EventKind = Literal[
    "thinking",  # a model call started (spinner)
    "decision",  # the Main decision (rationale, step, pattern)
    "transition",  # a step change
    "refused",  # a refused transition (debug output)
    "plan",  # a plan was proposed
    "tool_call",  # a call is about to run
    "proposed",  # a call was proposed, not run (guessed, or planned for later)
    "approval",  # an approval request waits for the person
    "tool_result",  # a call ran (ok or error)
    "reply",  # the text for the person
    "notice",  # something the person should know (cut budget, repaired JSON, ...)
    "error",
]


@dataclass(frozen=True)
class Event:
    kind: EventKind
    text: str
    data: dict[str, Any] = field(default_factory=dict)
    seq: int = 0
    time: float = 0.0


class EventSink:
    """Numbers events and hands them to listeners; keeps the events of the current turn."""

    def __init__(self) -> None:
        self._seq = 0
        self._listeners: list[Callable[[Event], None]] = []
        self.turn: list[Event] = []

    def subscribe(self, listener: Callable[[Event], None]) -> None:
        self._listeners.append(listener)

    def emit(self, kind: EventKind, text: str, **data: Any) -> Event:
        self._seq += 1
        ev = Event(kind, text, data, self._seq, time.time())
        self.turn.append(ev)
        for listener in list(self._listeners):
            listener(ev)
        return ev

    def start_turn(self) -> None:
        self.turn = []
