"""The orchestra's event log, written by a background thread so a message's first chunk does not wait.

`EventLog.emit` masks every field with the sanitizer before it appends the line (seed 003 §7:
logs are kept masked only); on the server that was ~3 ms per message, paid before the route
chunk could go out (measured with `duckflow bench server`). `BackgroundEvents` takes the same
calls, checks the event type at once, and has one thread mask and append them in order.
`flush()` waits for what was queued; `read()` flushes first.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Iterator
from typing import Any

log = logging.getLogger("duckflow.channels")


class BackgroundEvents:
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.path = inner.path
        self._queue: queue.SimpleQueue[tuple[str, str, dict[str, Any]] | None] = queue.SimpleQueue()
        self._cond = threading.Condition()
        self._queued = 0
        self._written = 0
        self._thread: threading.Thread | None = None

    def emit(self, type: str, session_id: str = "", **fields: Any) -> dict[str, Any]:
        from duckflow.orchestra.events import EVENT_TYPES

        if type not in EVENT_TYPES:
            raise ValueError(f"unknown event type {type!r}")
        with self._cond:
            self._queued += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="duckflow-events", daemon=True)
                self._thread.start()
        self._queue.put((type, session_id, fields))
        return {"type": type, "session_id": session_id, **fields}

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            type_, session_id, fields = item
            try:
                self.inner.emit(type_, session_id, **fields)
            except Exception as exc:  # a broken record is reported, never silently lost in a thread
                log.error("could not write event %s to %s: %s", type_, self.path, exc)
            with self._cond:
                self._written += 1
                self._cond.notify_all()

    def flush(self, timeout: float = 10.0) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self._written >= self._queued, timeout)

    def read(self, **kw: Any) -> Iterator[dict[str, Any]]:
        self.flush()
        events: Iterator[dict[str, Any]] = self.inner.read(**kw)
        return events

    def close(self) -> None:
        self.flush()
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join(5)
            self._thread = None
