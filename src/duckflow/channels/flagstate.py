"""The orchestra's session state for a server: flags kept in memory, written when they change, off the loop.

`OrchestraState` reads a session's flags (local_only, the previous route, the coding task) from SQLite and
writes them back on every message. A server routes every message on its event loop, and under
load a SQLite write there waited on the disk (a WAL checkpoint's fsync: 10-30 ms stalls of every
stream, traced in `duckflow bench server`). `ServerState` is the same store for the process
that owns these sessions: a session's flags are read once, kept in memory (bounded), and a
change is written by one writer thread on its own connection, in order. Coder jobs and
everything else go to `OrchestraState` unchanged.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from duckflow.orchestra.router import SessionFlags
from duckflow.orchestra.state import OrchestraState

log = logging.getLogger("duckflow.channels")
MAX_KEPT = 20_000  # sessions whose flags stay in memory (~200 bytes each); older ones are read again


class ServerState(OrchestraState):
    def __init__(self, path: str | Path | None = None) -> None:
        super().__init__(path)
        self._kept: dict[tuple[str, str], tuple[bool, str, str]] = {}
        self._behind = str(self.path) != ":memory:"  # an in-memory database has one connection
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="duckflow-flags")
        self._local = threading.local()
        self._last: Future[None] | None = None

    def flags(self, channel: str, session_id: str) -> SessionFlags:
        kept = self._kept.get((channel, session_id))
        if kept is None:
            flags = super().flags(channel, session_id)
            self._keep((channel, session_id), (flags.local_only, flags.prev_route, flags.coding))
            return flags
        return SessionFlags(*kept)

    def save_flags(self, channel: str, session_id: str, flags: SessionFlags) -> None:
        key, value = (channel, session_id), (flags.local_only, flags.prev_route, flags.coding)
        if self._kept.get(key) == value:
            return  # unchanged: nothing to write
        self._keep(key, value)
        if not self._behind:
            super().save_flags(channel, session_id, flags)
            return
        self._last = self._writer.submit(self._write, channel, session_id, SessionFlags(*value))
        self._last.add_done_callback(_report)

    def _keep(self, key: tuple[str, str], value: tuple[bool, str, str]) -> None:
        self._kept.pop(key, None)
        self._kept[key] = value
        if len(self._kept) > MAX_KEPT:
            del self._kept[next(iter(self._kept))]  # the least recently changed or read

    def _write(self, channel: str, session_id: str, flags: SessionFlags) -> None:
        """In the writer thread, on its own connection (the loop's one is never shared)."""
        state = getattr(self._local, "state", None)
        if state is None:
            state = self._local.state = OrchestraState(self.path)
        state.save_flags(channel, session_id, flags)

    def flush(self) -> None:
        """Wait until every change handed to the writer is on disk."""
        if self._last is not None:
            self._last.exception()

    def close(self) -> None:
        self._writer.submit(self._close_writer).exception()
        self._writer.shutdown(wait=True)
        super().close()

    def _close_writer(self) -> None:
        state = getattr(self._local, "state", None)
        if state is not None:
            state.close()


def _report(done: Future[None]) -> None:
    exc = done.exception()
    if exc is not None:  # the flags stay right in memory; only their copy on disk is missing
        log.error("could not write session flags to SQLite: %s", exc)
