"""Sessions: one conversation's id, chunk sequence, history and token-warning state."""

from __future__ import annotations

import uuid
from collections import OrderedDict
from dataclasses import dataclass, field

from duckflow.core.chunks import SessionSequence
from duckflow.llm.types import Message

MAX_LIVE_SESSIONS = 10_000
_live: OrderedDict[str, Session] = OrderedDict()


@dataclass
class Session:
    """Pass the same Session (or the same session id) to successive runs to continue.

    `seq` numbers every chunk of the session (nested runs share it); `history` holds the
    top-level agent's messages (not the system prompt; unused when the agent has a
    ShortTermMemory); `token_warned` makes the token guard's warning appear once.
    Sessions named by id live in a process-wide LRU of `MAX_LIVE_SESSIONS`.
    """

    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    seq: SessionSequence = field(default_factory=SessionSequence)
    history: list[Message] = field(default_factory=list)
    token_warned: bool = False

    @classmethod
    def of(cls, session: Session | str | None) -> Session:
        """The Session given; the live session with that id (or a new one); a new session."""
        if isinstance(session, Session):
            return session
        found = _live.pop(session, None) if session else None
        if found is None:
            found = cls(id=session) if session else cls()
        _live[found.id] = found
        while len(_live) > MAX_LIVE_SESSIONS:
            _live.popitem(last=False)
        return found

    @staticmethod
    def forget(session_id: str) -> bool:
        """Drop a live session by id (its history and seq); True if it was there."""
        return _live.pop(session_id, None) is not None
