"""Where a companion session's chunks go: numbered by the session's one seq, kept per turn, fanned out.

Every layer of a turn (the engine's model calls and tools, the companion's decisions,
transitions, plans, approvals, notices, replies) emits core `Chunk`s here. The hub stamps
`seq` from the core session's `SessionSequence` (one numbering per session), keeps the
chunks of the current turn (for `TurnResult.chunks`) and hands each to its listeners: the
`CompanionSession.stream()` queue, a CLI renderer, a test.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from duckflow.core.chunks import AnyChunk, NoticeChunk, NoticeData, SessionSequence

Listener = Callable[[AnyChunk], None]


class ChunkHub:
    def __init__(self, seq: SessionSequence | None = None, agent: str = "companion") -> None:
        self.seq = seq or SessionSequence()
        self.agent = agent
        self._listeners: list[Listener] = []
        self.turn: list[AnyChunk] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Add a listener; returns the function that removes it again."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def emit(self, chunk: AnyChunk) -> AnyChunk:
        self.seq.stamp(chunk)
        self.turn.append(chunk)
        for listener in list(self._listeners):
            listener(chunk)
        return chunk

    def notice(self, code: str, message: str, **details: Any) -> AnyChunk:
        return self.emit(NoticeChunk(agent=self.agent, data=NoticeData(code=code, message=message,
                                                                       details=details)))

    def start_turn(self) -> None:
        self.turn = []

    def release_turn(self) -> None:
        """Forget the chunks of the turn that ended (a streamed task is over: its `TurnResult`s
        hold their own lists). Kept, an idle session held its last turn's ~50 chunk models
        (~300 objects the collector tracks) until its next message: at 500 idle sessions ~260,000
        objects that every generation-1 collection of a server walked (20-130 ms pauses)."""
        self.turn = []
