"""Agent memory in a run: short-term history per session, long-term recall (seed 004 §2, §9-3).

Short-term: by default the `Session` object holds the history; with `Agent(memory=
ShortTermMemory(maxlen))` the last `maxlen` messages of each session are kept there instead
(bounded, shared by every run of that session id). A window cut mid-exchange starts at its
first user message, so no tool result arrives without the call that asked for it.
Long-term: with `Agent(memory_store=SQLiteMemoryStore(...))` the input is searched in the
store and the best matches are added to the system prompt; each finished exchange is stored.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Protocol

from duckflow.core.session import Session
from duckflow.llm.types import Message

RECALL_HEADER = "Notes from earlier conversations (use them if they help):"


class History(Protocol):
    """Short-term memory as the agent uses it (`core.memory.ShortTermMemory` is one)."""

    def add(self, session: str, item: Any) -> None: ...

    def get(self, session: str, last: int | None = None) -> list[Any]: ...


class RecalledItem(Protocol):
    @property
    def text(self) -> str: ...


class Recall(Protocol):
    """Long-term memory as the agent uses it (every `core.memory.MemoryStore` is one)."""

    def add(self, session: str, text: str, metadata: dict[str, Any] | None = None) -> int: ...

    def search(self, query: str, *, session: str | None = None, limit: int = 5) -> Sequence[RecalledItem]: ...


def load_history(memory: History | None, session: Session) -> list[Message]:
    """The session's earlier messages, from `memory` (a ShortTermMemory) or the Session."""
    if memory is None:
        return list(session.history)
    items = [m for m in memory.get(session.id) if isinstance(m, Message)]
    for i, message in enumerate(items):
        if message.role == "user":
            return items[i:]
    return []


def save_history(memory: History | None, session: Session, messages: Sequence[Message]) -> None:
    if memory is None:
        session.history.extend(messages)
        return
    for message in messages:
        memory.add(session.id, message)


async def recall(store: Recall, query: str, session_id: str, limit: int) -> str:
    """The store's best matches for `query` as a note for the system prompt ('' if none)."""
    if not query.strip() or limit <= 0:
        return ""
    items = await asyncio.to_thread(store.search, query, session=session_id, limit=limit)
    lines = [f"- {item.text}" for item in items if item.text]
    return RECALL_HEADER + "\n" + "\n".join(lines) if lines else ""


async def remember(store: Recall, session_id: str, question: str, answer: str, agent: str) -> None:
    await asyncio.to_thread(store.add, session_id, f"Q: {question}\nA: {answer}", {"agent": agent})
