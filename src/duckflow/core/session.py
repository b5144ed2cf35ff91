"""Sessions: one conversation's id, chunk sequence and history, and the stores that keep them.

A run without `session=` gets a fresh `Session` that nobody keeps: it dies with its run. A run
with `session="id"` loads that session from the agent's `SessionStore` and saves it back, so
successive runs continue the conversation. The default store, `MemorySessions`, belongs to
one agent and is bounded by count and by the bytes of the history it holds (an unbounded
process-wide registry kept every anonymous run's history alive: tens of MB after a few
thousand runs). Give several agents one store to let them share sessions by id.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from duckflow.core.sequence import SessionSequence

if TYPE_CHECKING:
    from duckflow.llm.types import Message

def _new_id() -> str:
    """A fresh session id (uuid4 hex); uuid is imported here, not with `from duckflow import Agent`."""
    import uuid

    return uuid.uuid4().hex


MESSAGE_OVERHEAD = 120  # bytes a Message costs beyond its text (object, dict, list slot), roughly


@dataclass
class Session:
    """Pass the same Session (or the same session id) to successive runs to continue.

    `seq` numbers every chunk of the session (nested runs share it); `history` holds the
    top-level agent's messages (not the system prompt; unused when the agent has a short-term
    memory); `token_warned` makes the token guard's warning appear once.
    """

    id: str = field(default_factory=_new_id)
    seq: SessionSequence = field(default_factory=SessionSequence)
    history: list[Message] = field(default_factory=list)
    token_warned: bool = False

    def size_bytes(self) -> int:
        """About how much memory the history holds (text length + a per-message overhead)."""
        total = 0
        for m in self.history:
            total += MESSAGE_OVERHEAD + len(m.content)
            for call in m.tool_calls:
                total += MESSAGE_OVERHEAD + len(repr(call.arguments))
        return total


@runtime_checkable
class SessionStore(Protocol):
    """Where an agent keeps named sessions between runs (cf. openai-agents' `Session` protocol)."""

    def load(self, session_id: str) -> Session:
        """The stored session with this id, or a new empty one with it."""
        ...

    def save(self, session: Session) -> None:
        """Keep `session` (after a run) so the next `load` of its id continues it."""
        ...

    def forget(self, session_id: str) -> bool:
        """Drop a session; True if it was there."""
        ...


class MemorySessions:
    """The default SessionStore: in this process, least recently used dropped first.

    Bounded by `max_sessions` and by `max_bytes` of history in total (`Session.size_bytes`);
    a single session larger than `max_bytes` is not kept at all.
    """

    def __init__(self, *, max_sessions: int = 1_000, max_bytes: int = 32 * 1024 * 1024) -> None:
        self.max_sessions = max_sessions
        self.max_bytes = max_bytes
        self._sessions: OrderedDict[str, tuple[Session, int]] = OrderedDict()
        self._bytes = 0

    def load(self, session_id: str) -> Session:
        found = self._sessions.get(session_id)
        if found is None:
            return Session(id=session_id)
        self._sessions.move_to_end(session_id)
        return found[0]

    def save(self, session: Session) -> None:
        old = self._sessions.pop(session.id, None)
        if old is not None:
            self._bytes -= old[1]
        size = session.size_bytes()
        if size > self.max_bytes:
            return
        self._sessions[session.id] = (session, size)
        self._bytes += size
        while self._sessions and (len(self._sessions) > self.max_sessions or self._bytes > self.max_bytes):
            _, (_, dropped) = self._sessions.popitem(last=False)
            self._bytes -= dropped

    def forget(self, session_id: str) -> bool:
        old = self._sessions.pop(session_id, None)
        if old is not None:
            self._bytes -= old[1]
        return old is not None

    @property
    def bytes(self) -> int:
        """The history bytes held now (by `Session.size_bytes`)."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._sessions)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._sessions
