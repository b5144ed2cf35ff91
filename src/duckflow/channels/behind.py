"""Write-behind for the server's per-message SQLite writes: the session store and the token counter.

A companion turn saves its session state several times and adds to the session's token
count after each model call. On the event loop each such write waits on the disk, and the
GIL it lets go of during the call is taken by a writer thread until the switch interval ends
(traced in `duckflow bench server`: under load they were the tail of every stream). For the
process that owns these sessions the server keeps what it needs in memory and one writer
thread writes the changes in order, on its own connection, coalesced per key (the newest
state of a session, the sum of its pending token counts), at most `DELAY_S` after the change.

What a crash may lose: the last `DELAY_S` of changes. The stored totals stay exact (the
counter's upsert adds); a second process counting on the same session is not seen by this
one's cached total (the server owns its sessions; Redis is the backend for several servers).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from duckflow.companion.state import AgentState
from duckflow.companion.store import SaveRows, SessionStore

log = logging.getLogger("duckflow.channels")
DELAY_S = 0.02  # the writer waits this long after a first change, so the next ones join it
MAX_KNOWN = 100_000  # token totals kept in memory (sessions); older ones are read again


class _Batch:
    __slots__ = ("items", "sealed")

    def __init__(self) -> None:
        self.items: dict[Any, Any] = {}
        self.sealed = False


class WriteBehind:
    """One writer thread writing batches of pending writes in order (newest value per key wins).

    A batch takes writes until its drain starts, or until `call` queues work behind it: what
    is put after that goes into a new batch, written after that work.
    """

    def __init__(self, name: str, write: Callable[[list[tuple[Any, Any]]], None]) -> None:
        self._write = write
        self._lock = threading.Lock()
        self._batch: _Batch | None = None
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)

    def put(self, key: Any, value: Any, merge: Callable[[Any, Any], Any] | None = None) -> None:
        with self._lock:
            batch = self._batch
            if batch is None or batch.sealed:
                batch = self._batch = _Batch()
                self._pool.submit(self._drain, batch).add_done_callback(_report)
            old = batch.items.get(key)
            batch.items[key] = value if merge is None or old is None else merge(old, value)

    def drop(self, key: Any) -> None:
        """Forget a write of `key` that has not started."""
        with self._lock:
            if self._batch is not None and not self._batch.sealed:
                self._batch.items.pop(key, None)

    def call(self, fn: Callable[[], None]) -> None:
        """Run `fn` in the writer thread after everything put before it."""
        with self._lock:
            if self._batch is not None:
                self._batch.sealed = True
            self._pool.submit(fn).add_done_callback(_report)

    def _drain(self, batch: _Batch) -> None:
        time.sleep(DELAY_S)
        with self._lock:
            batch.sealed = True
        if batch.items:
            self._write(list(batch.items.items()))

    def flush(self, timeout: float | None = None) -> None:
        """Wait until every write put so far is done (concurrent.futures.TimeoutError after `timeout`)."""
        with self._lock:
            if self._batch is not None:
                self._batch.sealed = True
            done = self._pool.submit(lambda: None)
        done.result(timeout)

    def close(self) -> None:
        self.flush()
        self._pool.shutdown(wait=True)


def _report(done: Future[None]) -> None:
    exc = done.exception()
    if exc is not None:  # what is in memory stays right; only its copy on disk is missing
        log.error("a write-behind write failed: %s", exc)


class BehindSessionStore(SessionStore):
    """`SessionStore` whose `save` serialises at once and writes from the writer thread."""

    def __init__(self, path: str | Path | None = None) -> None:
        super().__init__(path)
        self._local = threading.local()
        self._behind = WriteBehind("duckflow-sessions", self._write_items)

    def save(self, state: AgentState, extra: dict[str, Any] | None = None) -> None:
        rows = self.rows(state, extra)
        self._behind.put(state.session_id, rows, _keep_memory)

    def _write_items(self, items: list[tuple[Any, Any]]) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            from duckflow.store.sqlite import connect

            conn = self._local.conn = connect(self.path)
        with conn:
            for _, rows in items:
                self.write_rows(conn, rows)

    # every read sees what was saved before it
    def load(self, session_id: str) -> tuple[AgentState, dict[str, Any]] | None:
        self._behind.flush()
        return super().load(session_id)

    def latest(self, workspace: str | None = None) -> str | None:
        self._behind.flush()
        return super().latest(workspace)

    def list(self, limit: int = 50, workspace: str | None = None) -> Any:
        self._behind.flush()
        return super().list(limit, workspace)

    def load_memory(self, workspace: str) -> dict[str, Any] | None:
        self._behind.flush()
        return super().load_memory(workspace)

    def memories(self) -> Any:
        self._behind.flush()
        return super().memories()

    def save_memory(self, workspace: str, memory: dict[str, Any]) -> None:
        self._behind.flush()
        super().save_memory(workspace, memory)

    def delete(self, session_id: str) -> bool:
        self._behind.flush()
        return super().delete(session_id)

    def close(self) -> None:
        self._behind.call(self._close_writer)
        self._behind.close()
        super().close()

    def _close_writer(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()


def _keep_memory(old: SaveRows, new: SaveRows) -> SaveRows:
    """A newer save of a session replaces the older, but keeps a memory row the newer one
    left out (unchanged since the older one, which had not been written yet)."""
    return new if new.memory is not None or old.memory is None else SaveRows(old.memory, new.session)


class BehindCounter:
    """A `SQLiteCounter` whose totals are kept in memory and whose adds are written behind."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self._known: dict[str, int] = {}
        self._behind = WriteBehind("duckflow-tokens", self._write_items)

    async def get(self, session: str) -> int:
        total = self._known.get(session)
        if total is None:
            total = await self.inner.get(session)  # once per session: what earlier runs counted
            self._remember(session, total)
        return total

    async def add(self, session: str, n: int) -> int:
        total = await self.get(session) + n
        self._remember(session, total)
        if n:
            self._behind.put(session, n, lambda a, b: a + b)
        return total

    async def reset(self, session: str) -> None:
        self._known.pop(session, None)
        self._behind.drop(session)  # adds not written yet are void
        self._behind.call(lambda: self.inner._reset(session))

    def _remember(self, session: str, total: int) -> None:
        self._known.pop(session, None)
        self._known[session] = total
        if len(self._known) > MAX_KNOWN:
            self._behind.flush()  # the oldest total may have adds on the way: read it again later
            del self._known[next(iter(self._known))]

    def _write_items(self, items: list[tuple[Any, Any]]) -> None:
        for session, n in items:
            self.inner._add(session, n)

    def flush(self) -> None:
        self._behind.flush()

    def close(self) -> None:
        self._behind.close()
        if hasattr(self.inner, "close"):
            self.inner.close()
