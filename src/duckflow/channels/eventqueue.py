"""The orchestra's event log, written behind so a message's first chunk does not wait.

`EventLog.emit` masks every field with the sanitizer before it appends the line (seed 003 §7:
logs are kept masked only); on the server that was ~3 ms per message, paid before the route
chunk could go out (measured with `duckflow bench server`). `BackgroundEvents` takes the same
calls, checks the event type at once, and hands the events to the server's one write-behind
helper (`channels.behind.WriteBehind`): its writer thread masks and appends them in order,
the events of a short stretch together (one wake-up of the thread per batch, not per event).
`flush()` waits for what was queued; `read()` flushes first.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterator
from concurrent.futures import TimeoutError as FlushTimeout
from typing import Any

from duckflow.channels.behind import WriteBehind

log = logging.getLogger("duckflow.channels")


class BackgroundEvents:
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.path = inner.path
        self._order = itertools.count()  # a key per event: none is coalesced, the batch keeps the order
        self._behind = WriteBehind("duckflow-events", self._write)

    def emit(self, type: str, session_id: str = "", **fields: Any) -> dict[str, Any]:
        from duckflow.orchestra.events import EVENT_TYPES

        if type not in EVENT_TYPES:
            raise ValueError(f"unknown event type {type!r}")
        self._behind.put(next(self._order), (type, session_id, fields))
        return {"type": type, "session_id": session_id, **fields}

    def _write(self, batch: list[tuple[Any, Any]]) -> None:
        for _, (type_, session_id, fields) in batch:
            try:
                self.inner.emit(type_, session_id, **fields)
            except Exception as exc:  # a broken record is reported, never silently lost in a thread
                log.error("could not write event %s to %s: %s", type_, self.path, exc)

    def flush(self, timeout: float = 10.0) -> bool:
        try:
            self._behind.flush(timeout)
        except FlushTimeout:
            return False
        return True

    def read(self, **kw: Any) -> Iterator[dict[str, Any]]:
        self.flush()
        events: Iterator[dict[str, Any]] = self.inner.read(**kw)
        return events

    def close(self) -> None:
        self._behind.close()
