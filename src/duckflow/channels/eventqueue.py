"""The orchestra's event log, written by a background thread so a message's first chunk does not wait.

`EventLog.emit` masks every field with the sanitizer before it appends the line (seed 003 §7:
logs are kept masked only); on the server that was ~3 ms per message, paid before the route
chunk could go out (measured with `duckflow bench server`). `BackgroundEvents` takes the same
calls, checks the event type at once, and has one thread mask and append them in order.
On an event loop the calls of `BATCH_S` go to the thread together (one wake-up of the thread,
and one hand-back of the GIL, per batch instead of per event). `flush()` waits for what was
queued; `read()` flushes first.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections.abc import Iterator
from typing import Any

log = logging.getLogger("duckflow.channels")
BATCH_S = 0.05


class BackgroundEvents:
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.path = inner.path
        self._queue: queue.SimpleQueue[list[tuple[str, str, dict[str, Any]]] | None] = queue.SimpleQueue()
        self._batch: list[tuple[str, str, dict[str, Any]]] = []
        self._handle: asyncio.TimerHandle | None = None
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
        self._batch.append((type, session_id, fields))
        if self._handle is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no event loop (a script, a test): to the thread at once
                self._hand_over()
            else:  # on a loop: one hand-over (one wake-up of the thread) per BATCH_S
                self._handle = loop.call_later(BATCH_S, self._hand_over)
        return {"type": type, "session_id": session_id, **fields}

    def _hand_over(self) -> None:
        self._handle = None
        batch, self._batch = self._batch, []
        if batch:
            self._queue.put(batch)

    def _run(self) -> None:
        while (batch := self._queue.get()) is not None:
            for type_, session_id, fields in batch:
                try:
                    self.inner.emit(type_, session_id, **fields)
                except Exception as exc:  # a broken record is reported, never silently lost in a thread
                    log.error("could not write event %s to %s: %s", type_, self.path, exc)
            with self._cond:
                self._written += len(batch)
                self._cond.notify_all()

    def flush(self, timeout: float = 10.0) -> bool:
        if self._handle is not None:
            self._handle.cancel()
        self._hand_over()
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
