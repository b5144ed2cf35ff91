"""The per-session chunk log: one seq per session, a ring of recent chunks in memory and SQLite.

Every chunk a channel shows goes through `ChunkLog.publish(session_id, chunk)`, which stamps the
next `seq` of that session (the SSE event id), keeps the JSON in an in-memory ring and queues it
for SQLite (written in batches by a writer thread, so a slow disk never stalls the event loop —
a WAL checkpoint's fsync took 10-30 ms under load, traced in `duckflow bench server` — and
pruned to the last `ring` chunks per session). A client that
reconnects with `Last-Event-ID: N` gets `since(session_id, N)`: exactly the chunks after N, from
memory when the ring still holds them, otherwise from SQLite (also after a server restart).
Followers wait on `wait(session_id, seen)`; nothing here knows about HTTP. At most
`max_in_memory` sessions keep their ring in memory (least recently used ones nobody waits on
are dropped; their chunks stay in SQLite).
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import threading
from collections import OrderedDict, deque
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import islice
from pathlib import Path
from typing import Any

from duckflow.core.chunks import now_iso

log = logging.getLogger("duckflow.channels")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS chunks (
  session_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  body TEXT NOT NULL,
  PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
"""


class _Stream:
    __slots__ = ("last", "ring", "changed", "waiters")

    def __init__(self, last: int, size: int) -> None:
        self.last = last
        self.ring: deque[tuple[int, str]] = deque(maxlen=size)
        self.changed = asyncio.Event()
        self.waiters = 0


def _stamped(chunk: Any, seq: int) -> str:
    """The chunk's JSON with `seq`. A core Chunk serialises itself (its own wire format, `to_json`;
    seq is its last field, so it is replaced at the end, not dumped twice); a dict gets time,
    agent and type first (what `kind_of` relies on), then its own keys."""
    if not isinstance(chunk, dict):
        body: str = chunk.model_dump_json()
        tail = f',"seq":{chunk.seq}}}'
        if body.endswith(tail):
            return f'{body[: -len(tail)]},"seq":{seq}}}'
        chunk = chunk.model_dump(mode="json")  # pragma: no cover - a Chunk always ends with its seq
    out = {"time": chunk.get("time") or now_iso(), "agent": chunk.get("agent") or "duckflow",
           "type": chunk.get("type"), **chunk}
    out["seq"] = seq
    return json.dumps(out, ensure_ascii=False, separators=(",", ":"), default=str)


def kind_of(body: str) -> str:
    """A published chunk's `type`, read from its JSON text without parsing it: `publish` writes the
    chunk's own `type` before its `data`, so the first `"type":` is the chunk's (one nested in
    `data` — tool arguments the model chose — comes later)."""
    at = body.find('"type":')
    if at < 0 or body[at + 7 : at + 8] != '"':
        return ""
    return body[at + 8 : body.find('"', at + 8)]


class ChunkLog:
    """Chunks per session with gap-free seqs; `ring` recent ones survive in memory and on disk."""

    def __init__(self, path: str | Path, *, ring: int = 2000, flush_delay: float = 0.02,
                 max_in_memory: int = 1000) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.ring = ring
        self.flush_delay = flush_delay
        self._conn = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.executescript(_SCHEMA)
        self._lock = threading.Lock()  # the reading connection (the loop's)
        # the writing one: a read on the loop never waits for a write (WAL readers see the last
        # commit; rows still queued belong to sessions whose ring is in memory, see _evict)
        self._wconn = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        self._wconn.execute("PRAGMA synchronous=NORMAL")
        self._wlock = threading.Lock()
        self.max_in_memory = max_in_memory  # sessions whose ring stays in memory (the rest: SQLite)
        self._streams: OrderedDict[str, _Stream] = OrderedDict()
        self._pending: list[tuple[str, int, str]] = []
        self._pruned: dict[str, int] = {}
        self._flush_handle: asyncio.TimerHandle | None = None
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="duckflow-chunklog")
        self._inflight: Future[None] | None = None

    # -- writing --------------------------------------------------------------------------
    def _stream(self, session_id: str) -> _Stream:
        st = self._streams.get(session_id)
        if st is None:
            with self._lock:
                row = self._conn.execute("SELECT MAX(seq) FROM chunks WHERE session_id = ?",
                                         (session_id,)).fetchone()
            st = _Stream(int(row[0] or 0), self.ring)
            self._streams[session_id] = st
            if len(self._streams) > self.max_in_memory:
                self._evict()
        else:
            self._streams.move_to_end(session_id)
        return st

    def _evict(self) -> None:
        """Drop the rings of the least recently used sessions nobody waits on (SQLite keeps them)."""
        self.flush()  # a ring made again later reads its last seq from SQLite
        for sid in list(self._streams)[: len(self._streams) - self.max_in_memory]:
            if self._streams[sid].waiters == 0:
                del self._streams[sid]

    def last_seq(self, session_id: str) -> int:
        return self._stream(session_id).last

    def publish(self, session_id: str, chunk: Any) -> int:
        """Stamp the next seq on `chunk` (a core Chunk, or a dict shaped like one), keep it, wake followers."""
        st = self._stream(session_id)
        seq = st.last + 1
        body = _stamped(chunk, seq)
        st.last = seq
        st.ring.append((seq, body))
        self._pending.append((session_id, seq, body))
        self._schedule_flush()
        ev, st.changed = st.changed, asyncio.Event()
        ev.set()
        return seq

    def _schedule_flush(self) -> None:
        if self._flush_handle is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()
            return
        self._flush_handle = loop.call_later(self.flush_delay, self._flush_behind)

    def _flush_behind(self) -> None:
        """The queued chunks to the writer thread (in order: it has one thread)."""
        self._flush_handle = None
        if not self._pending:
            return
        rows, self._pending = self._pending, []
        self._inflight = self._writer.submit(self._write, rows)
        self._inflight.add_done_callback(_report)

    def flush(self) -> None:
        """Write queued chunks to SQLite now, after any write in progress (its caller waits)."""
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        inflight, self._inflight = self._inflight, None
        if inflight is not None:
            inflight.exception()  # waits; an error was logged by _report
        if self._pending:
            rows, self._pending = self._pending, []
            self._write(rows)

    def _write(self, rows: list[tuple[str, int, str]]) -> None:
        """Write `rows` and drop what fell out of each session's ring (writer thread or caller)."""
        newest: dict[str, int] = {}
        for sid, seq, _ in rows:
            newest[sid] = seq
        with self._wlock:
            conn = self._wconn
            conn.execute("BEGIN")
            try:
                conn.executemany("INSERT OR REPLACE INTO chunks VALUES (?, ?, ?)", rows)
                for sid, seq in newest.items():
                    cut = seq - self.ring
                    if cut > 0 and cut - self._pruned.get(sid, 0) >= max(1, self.ring // 4):
                        conn.execute("DELETE FROM chunks WHERE session_id = ? AND seq <= ?", (sid, cut))
                        self._pruned[sid] = cut
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    # -- reading --------------------------------------------------------------------------
    def since(self, session_id: str, after: int) -> list[tuple[int, str]]:
        """The chunks of a session with seq > `after`, in order (JSON text each)."""
        st = self._stream(session_id)
        if after >= st.last:
            return []
        wanted = st.last - after
        if wanted <= len(st.ring):  # the ring's seqs run gap-free up to st.last: the newest `wanted`
            if wanted == 1:  # a follower woken by each publish
                return [st.ring[-1]]
            return list(islice(reversed(st.ring), wanted))[::-1]
        self.flush()
        with self._lock:
            rows = self._conn.execute(
                "SELECT seq, body FROM chunks WHERE session_id = ? AND seq > ? ORDER BY seq",
                (session_id, after)).fetchall()
        return [(int(s), str(b)) for s, b in rows]

    def oldest(self, session_id: str) -> int:
        """The oldest seq still kept for a session (0 when none)."""
        st = self._stream(session_id)
        self.flush()
        with self._lock:
            row = self._conn.execute("SELECT MIN(seq) FROM chunks WHERE session_id = ?",
                                     (session_id,)).fetchone()
        return int(row[0] or (st.ring[0][0] if st.ring else 0))

    async def wait(self, session_id: str, seen: int, timeout: float) -> bool:
        """Wait until the session has a chunk after `seen`; False on timeout."""
        st = self._stream(session_id)
        if st.last > seen:
            return True
        st.waiters += 1  # a ring someone waits on is never evicted
        try:
            # asyncio.timeout, not wait_for: on 3.11 wait_for wraps the wait in a task of its own,
            # and a publish then takes three turns of the loop to reach this follower, not one
            async with asyncio.timeout(timeout):
                await st.changed.wait()
        except TimeoutError:
            return False
        finally:
            st.waiters -= 1
        return True

    def forget_memory(self, session_id: str) -> None:
        """Drop a session's in-memory ring (its chunks stay in SQLite)."""
        self.flush()
        self._streams.pop(session_id, None)

    def close(self) -> None:
        self.flush()
        self._writer.shutdown(wait=True)
        with self._wlock:
            self._wconn.close()
        with self._lock:
            self._conn.close()


def _report(done: Future[None]) -> None:
    exc = done.exception()
    if exc is not None:  # the chunks stay in memory (the ring); only their copy on disk is missing
        log.error("could not write chunks to SQLite: %s", exc)
