"""Sessions: one conversation's id, chunk sequence, history and token-warning state."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from duckflow.core.chunks import SessionSequence
from duckflow.llm.types import Message


@dataclass
class Session:
    """Pass the same Session to successive `stream()`/`run()` calls to continue a conversation.

    `seq` numbers every chunk of the session (nested runs share it); `history` holds the
    top-level agent's messages (not the system prompt); `token_warned` makes the token
    guard's warning appear once per session.
    """

    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    seq: SessionSequence = field(default_factory=SessionSequence)
    history: list[Message] = field(default_factory=list)
    token_warned: bool = False

    @classmethod
    def of(cls, session: Session | str | None) -> Session:
        if isinstance(session, Session):
            return session
        return cls(id=session) if session else cls()
