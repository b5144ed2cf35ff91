"""The chunk log on a Redis Stream per session: gap-free seqs that every process can follow and resume.

Same interface as `channels.streamlog.ChunkLog`. The process that runs a session's turn (it holds
the session's lease, lease.py) stamps the seqs; a writer task appends the chunks to the stream
`df:c:{session}` with the seq as the entry id (`XADD … {seq}-1`: Redis refuses an id it already
has, so nothing is written twice) and announces them on `df:n`. A follower, on any process, sees
a chunk only once Redis has it, so a follower that reconnects elsewhere with `Last-Event-ID`
resumes exactly where it was. Each process keeps a ring of recent chunks per followed session,
filled by its own writes and, for sessions run elsewhere, by reading the stream when `df:n`
says there is more (and every `POLL_S` while someone waits, should an announcement be missed).
The stream keeps the last `ring` chunks; older ones come from PostgreSQL (`PgChunkArchive`).
While Redis is down, reads raise `StoreUnavailable` (503) and the writer keeps its chunks and
tries again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict, deque
from typing import Any

from duckflow.channels.shared.pg import StoreUnavailable, redact, unavailable
from duckflow.channels.streamlog import _stamped

log = logging.getLogger("duckflow.channels")
POLL_S = 1.0
MAX_CONNECTIONS = 64  # per process, to Redis (the chunk announcements hold one)
NOTIFY = "df:n"
_APPEND = """
local r = redis.pcall('XADD', KEYS[1], 'MAXLEN', '~', ARGV[3], ARGV[1] .. '-1', 'b', ARGV[2])
if type(r) == 'table' and r.err then return 0 end
redis.call('PUBLISH', KEYS[2], ARGV[4])
return 1
"""


def stream_key(session_id: str) -> str:
    return f"df:c:{session_id}"


def _seq(entry_id: Any) -> int:
    raw = entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id)
    return int(raw.split("-", 1)[0])


def _body(fields: dict[Any, Any]) -> str:
    raw = fields.get(b"b", fields.get("b", b""))
    return raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)


class _Stream:
    __slots__ = ("last", "ring", "changed", "waiters", "reading")

    def __init__(self, last: int, size: int) -> None:
        self.last = last
        self.ring: deque[tuple[int, str]] = deque(maxlen=size)
        self.changed = asyncio.Event()
        self.waiters = 0
        self.reading = False


class RedisChunkLog:
    def __init__(self, url: str, archive: Any, *, ring: int = 2000, max_in_memory: int = 1000) -> None:
        import redis
        import redis.asyncio

        self.url = url
        self.name = f"Redis at {redact(url)}"
        self.errors: tuple[type[BaseException], ...] = (redis.ConnectionError, redis.TimeoutError,
                                                         redis.BusyLoadingError, OSError)
        self.sync = redis.Redis.from_url(url, socket_timeout=3, socket_connect_timeout=2)
        # a bounded pool that waits for a free connection: 2,000 sessions running at once asked for
        # 2,000 connections ("Too many connections", found by `duckflow bench server`)
        pool = redis.asyncio.BlockingConnectionPool.from_url(url, max_connections=MAX_CONNECTIONS, timeout=20,
                                                             socket_timeout=5, socket_connect_timeout=2)
        self.aio = redis.asyncio.Redis(connection_pool=pool)
        self.archive = archive
        self.ring = ring
        self.max_in_memory = max_in_memory
        self._streams: OrderedDict[str, _Stream] = OrderedDict()
        self._next: dict[str, int] = {}  # the last seq stamped, for the sessions whose turn runs here
        self._pending: list[tuple[str, int, str]] = []
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._tasks: list[asyncio.Task[None]] = []
        self._append = self.aio.register_script(_APPEND)

    def sync_call(self, fn: Any) -> Any:
        try:
            return fn()
        except self.errors as exc:
            raise unavailable(self.name, exc) from None

    # -- the process's tasks ---------------------------------------------------------------
    async def start(self) -> None:
        self._tasks = [asyncio.create_task(self._writer()), asyncio.create_task(self._listener())]

    async def stop(self) -> None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.settle(), 5)
        for t in self._tasks:
            t.cancel()
        for t in self._tasks:
            with contextlib.suppress(BaseException):
                await t
        self._tasks = []
        await self.aio.aclose()

    # -- writing (the lease holder) --------------------------------------------------------
    async def prime(self, session_id: str) -> None:
        """Before a turn runs here: the next seq follows the stream's last (read fresh)."""
        self._next[session_id] = await asyncio.to_thread(self._last_in_store, session_id)

    def release(self, session_id: str) -> None:
        self._next.pop(session_id, None)

    def publish(self, session_id: str, chunk: Any) -> int:
        last = self._next.get(session_id)
        if last is None:
            last = self._last_in_store(session_id)
        seq = last + 1
        self._next[session_id] = seq
        self._pending.append((session_id, seq, _stamped(chunk, seq)))
        self._idle.clear()
        self._wake.set()
        return seq

    async def settle(self) -> None:
        """Wait until every chunk published so far is in Redis."""
        await self._idle.wait()

    async def _writer(self) -> None:
        failing = False
        while True:
            await self._wake.wait()
            self._wake.clear()
            rows, self._pending = self._pending, []
            if not rows:
                self._idle.set()
                continue
            try:
                async with self.aio.pipeline(transaction=False) as pipe:
                    for sid, seq, body in rows:
                        await self._append(keys=[stream_key(sid), NOTIFY],
                                           args=[seq, body, self.ring, f"{sid} {seq}"], client=pipe)
                    await pipe.execute()
            except self.errors as exc:
                if not failing:
                    log.error("%s is unreachable (%s): chunks are kept and written when it is back",
                              self.name, exc)
                failing = True
                self._pending = rows + self._pending
                await asyncio.sleep(0.2)
                self._wake.set()
                continue
            if failing:
                log.warning("%s is back: chunks written again", self.name)
            failing = False
            for sid, seq, body in rows:
                if self.archive is not None:
                    self.archive.add(sid, seq, body)
                st = self._streams.get(sid)
                if st is not None:
                    self._take(st, [(seq, body)])
            if not self._pending:
                self._idle.set()

    # -- following ---------------------------------------------------------------------------
    def _take(self, st: _Stream, rows: list[tuple[int, str]]) -> None:
        grew = False
        for seq, body in rows:
            if seq == st.last + 1:
                st.ring.append((seq, body))
                st.last = seq
                grew = True
        if grew:
            ev, st.changed = st.changed, asyncio.Event()
            ev.set()

    def _last_in_store(self, session_id: str) -> int:
        got = self.sync_call(lambda: self.sync.xrevrange(stream_key(session_id), count=1))
        if got:
            return _seq(got[0][0])
        if self.archive is not None:  # Redis lost the stream (or never had it): what PostgreSQL kept
            rows = self.archive.db.query("SELECT max(seq) AS s FROM chunks WHERE session_id=%s", (session_id,))
            return int(rows[0]["s"] or 0)
        return 0

    def _stream(self, session_id: str) -> _Stream:
        st = self._streams.get(session_id)
        if st is None:
            st = _Stream(self._last_in_store(session_id), self.ring)
            self._streams[session_id] = st
            if len(self._streams) > self.max_in_memory:
                for sid in list(self._streams)[: len(self._streams) - self.max_in_memory]:
                    if self._streams[sid].waiters == 0:
                        del self._streams[sid]
        else:
            self._streams.move_to_end(session_id)
        return st

    def last_seq(self, session_id: str) -> int:
        st = self._stream(session_id)
        fresh = self._read_sync(session_id, st.last)
        self._take(st, fresh)
        return st.last

    def _read_sync(self, session_id: str, after: int) -> list[tuple[int, str]]:
        got = self.sync_call(lambda: self.sync.xrange(stream_key(session_id), min=f"{after + 1}-0", max="+"))
        return self._whole(session_id, after, [(_seq(i), _body(f)) for i, f in got])

    def _whole(self, session_id: str, after: int, rows: list[tuple[int, str]]) -> list[tuple[int, str]]:
        """`rows` with any hole after `after` filled from PostgreSQL (trimmed, or lost by Redis)."""
        expect = after + 1
        if all(seq == expect + i for i, (seq, _) in enumerate(rows)) or self.archive is None:
            return rows
        upto = rows[-1][0]
        kept = dict(self.archive.since(session_id, after, upto))
        kept.update(rows)
        return sorted(kept.items())

    def since(self, session_id: str, after: int) -> list[tuple[int, str]]:
        st = self._stream(session_id)
        if after >= st.last:
            return []
        wanted = st.last - after
        if wanted <= len(st.ring):
            return list(st.ring)[-wanted:]
        first = _seq_first(self, session_id)
        if first and first > after + 1 and self.archive is not None:
            return self.archive.since(session_id, after, first - 1) + self._read_sync(session_id, first - 1)
        return self._read_sync(session_id, after)

    def oldest(self, session_id: str) -> int:
        if self.archive is not None:
            kept = self.archive.oldest(session_id)
            if kept:
                return int(kept)
        return _seq_first(self, session_id)

    async def _read(self, st: _Stream, session_id: str) -> None:
        if st.reading:
            return
        st.reading = True
        try:
            got: Any = await self.aio.xrange(stream_key(session_id), min=f"{st.last + 1}-0", max="+")
            rows = [(_seq(i), _body(f)) for i, f in got or []]
            if rows and rows[0][0] != st.last + 1:
                rows = await asyncio.to_thread(self._whole, session_id, st.last, rows)
            self._take(st, rows)
        except self.errors:
            pass  # the follower waits on; its next poll tries again
        finally:
            st.reading = False

    async def wait(self, session_id: str, seen: int, timeout: float) -> bool:
        st = self._stream(session_id)
        if st.last > seen:
            return True
        st.waiters += 1
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        try:
            while st.last <= seen:
                left = deadline - loop.time()
                if left <= 0:
                    return False
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(min(POLL_S, left)):
                        await st.changed.wait()
                if st.last <= seen:
                    await self._read(st, session_id)
        finally:
            st.waiters -= 1
        return True

    async def _listener(self) -> None:
        """`df:n` announcements: read the stream of a session someone here follows."""
        while True:
            pubsub = self.aio.pubsub()
            try:
                await pubsub.subscribe(NOTIFY)
                async for msg in pubsub.listen():
                    if msg.get("type") != "message":
                        continue
                    sid, _, seq = msg["data"].decode().rpartition(" ")
                    st = self._streams.get(sid)
                    if st is not None and int(seq) > st.last and sid not in self._next:
                        asyncio.create_task(self._read(st, sid))
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis went away: subscribe again (followers poll meanwhile)
                log.debug("chunk announcements interrupted: %s", exc)
                await asyncio.sleep(0.5)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()

    def forget_memory(self, session_id: str) -> None:
        self._streams.pop(session_id, None)

    def flush(self) -> None:
        """Nothing to wait for synchronously (the writer is a task; `settle()` waits for it)."""

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.sync.close()


def _seq_first(log_: RedisChunkLog, session_id: str) -> int:
    got = log_.sync_call(lambda: log_.sync.xrange(stream_key(session_id), min="-", max="+", count=1))
    return _seq(got[0][0]) if got else 0


__all__ = ["RedisChunkLog", "StoreUnavailable", "stream_key"]
