"""One turn at a time per session across processes: a Redis lease and a per-session queue (consumer group).

`SharedManager` is the `ChannelManager` for several processes. A message or an approval answer,
on whichever process it arrives, is added to the session's queue, the Redis Stream
`df:q:{session}`, and the session is marked active. The process that holds the session's lease
(`df:lock:{session}`, `SET NX PX`, renewed every third of `lease_s` by one thread for all the
sessions held here, off the event loop) reads the queue through
the consumer group `runners` and runs each entry as today (`ChannelManager._run`: chunks to the
chunk log, replies to the chat outboxes); an entry is acknowledged and deleted once its chunks
are in Redis. The lease is given back only when the queue is empty (checked in the same Lua
script, so a message added meanwhile is never stranded: its sender takes the lease, or the
holder reads it). A process that dies mid-turn stops renewing: after `lease_s` a sweeper on
any process takes the lease, marks the entries the dead process had read as interrupted (an
`error` chunk `interrupted` and a `done` with ending `interrupted`, at the next seqs of the
same stream, so followers see no gap) and runs what is left. Sending "continue" goes on from
the state the dead process last saved.

Stop reaches the turn wherever it runs (`cancel_turn`): a turn running here is cancelled at once;
otherwise the request is published on `df:stop` (Redis pub/sub, as the chunk announcements are)
with a reply key, every process hears it, the one whose turn it is cancels it and pushes the
answer onto the reply key, which the asking process waits on for at most `STOP_WAIT_S`. A
`/cancel` typed on the web while the session works goes the same way instead of into its queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import socket
import threading
from collections.abc import AsyncIterator
from typing import Any

from duckflow.channels.manager import ChannelManager
from duckflow.channels.shared.pg import unavailable
from duckflow.channels.shared.redislog import RedisChunkLog

log = logging.getLogger("duckflow.channels")
GROUP = "runners"
ACTIVE = "df:active"
_RELEASE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
if redis.call('XLEN', KEYS[2]) > 0 then return 0 end
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[3], ARGV[2])
return redis.call('INCR', KEYS[4])
"""
_RENEW = """
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
if not v then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
return 0
"""
STOP = "df:stop"  # "SESSION REPLY-KEY": cancel the session's turn if it runs on this process
STOP_WAIT_S = 3.0  # how long a Stop waits for the process running the turn to answer
INTERRUPTED = ("the server process running this turn stopped before it finished; "
               "send \"continue\" to go on from where it was saved")


def lock_key(sid: str) -> str:
    return f"df:lock:{sid}"


def queue_key(sid: str) -> str:
    return f"df:q:{sid}"


def version_key(sid: str) -> str:
    """How many times the session's lease was given back: a process whose copy of the session is
    from the same count may keep it (nobody ran a turn since)."""
    return f"df:v:{sid}"


def _text(fields: dict[Any, Any], key: str) -> str:
    raw = fields.get(key.encode(), fields.get(key, b""))
    return raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)


class SharedManager(ChannelManager):
    def __init__(self, runner: Any, chunks: RedisChunkLog, identities: Any, *, lease_s: float = 10.0) -> None:
        super().__init__(runner, chunks, identities)  # type: ignore[arg-type]  # ChunkLog's interface
        self.rlog: RedisChunkLog = chunks
        self.db: Any = None  # the Database, closed by finish()
        self.lease_ms = int(lease_s * 1000)
        self.lease_s = lease_s
        self.me = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
        self.sync = chunks.sync
        self.aio = chunks.aio
        self._release = self.aio.register_script(_RELEASE)
        self._owned: dict[str, asyncio.Task[None]] = {}
        self._sweeper: asyncio.Task[None] | None = None
        self._holding: set[str] = set()  # the leases the renewer keeps (the event loop adds and drops)
        self._holding_lock = threading.Lock()
        self._stop_renewing = threading.Event()
        self._renewer: threading.Thread | None = None
        self._stops: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.rlog.start()
        self._sweeper = asyncio.create_task(self._sweep())
        self._stops = asyncio.create_task(self._hear_stops())
        self._renewer = threading.Thread(target=self._renew_all, name="duckflow-lease", daemon=True)
        self._renewer.start()

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
        if self._stops is not None:
            self._stops.cancel()
        self._stop_renewing.set()
        await self.drain(timeout=5)
        for task in list(self._owned.values()):
            task.cancel()
        await self.rlog.stop()

    def finish(self) -> None:
        """After the runner closed: the archive's last writes, then the database's connections."""
        if self.rlog.archive is not None:
            self.rlog.archive.close()
        db = getattr(self, "db", None)
        if db is not None:
            db.close()

    # -- queueing (any process) -------------------------------------------------------------
    def busy(self, session_id: str) -> bool:
        if session_id in self._running:
            return True
        return bool(self.rlog.sync_call(lambda: self.sync.exists(lock_key(session_id))))

    def submit(self, session_id: str, text: str, channel: str = "http", *, target: Any = None,
               images: list[str] | None = None) -> int:
        if channel == "http" and text.strip().lower() == "/cancel" and self.busy(session_id):
            return self._cancel_typed(session_id)  # as Stop, wherever the turn runs (not queued behind it)
        return self._post(session_id, {"kind": "message", "text": text, "channel": channel,
                                        "images": json.dumps(images or []), "target": _target(target)})

    def submit_answer(self, session_id: str, job_id: str, granted: bool, *, by: str,
                      channel: str = "http", target: Any = None, note: str | None = None) -> int:
        return self._post(session_id, {"kind": "answer", "job": job_id, "granted": "1" if granted else "0",
                                        "by": by, "note": note or "", "channel": channel,
                                        "target": _target(target)})

    def _post(self, sid: str, fields: dict[Any, Any]) -> int:
        before = int(self.chunks.last_seq(sid))

        def post() -> bool:
            pipe = self.sync.pipeline(transaction=False)
            pipe.xadd(queue_key(sid), fields)
            pipe.sadd(ACTIVE, sid)
            pipe.set(lock_key(sid), self.me, nx=True, px=self.lease_ms)
            pipe.get(lock_key(sid))
            took, holder = pipe.execute()[-2:]
            return bool(took) or holder == self.me.encode()  # mine (a holder here, or just leaving)

        if self.rlog.sync_call(post):
            self._own(sid)
        return before

    # -- Stop, from any process -------------------------------------------------------------
    async def cancel_turn(self, session_id: str) -> bool:
        """Cancel the session's running turn wherever it runs; True when a process cancelled it."""
        if self.stop_turn(session_id):  # it runs here
            return True
        reply = f"df:stopped:{secrets.token_hex(8)}"
        try:
            holder = await self.aio.get(lock_key(session_id))
            if holder is None or holder == self.me.encode():  # no process runs it (or this one, between turns)
                return False
            if not int(await self.aio.publish(STOP, f"{session_id} {reply}")):
                return False
            got = await self.aio.blpop([reply], timeout=STOP_WAIT_S)
        except self.rlog.errors as exc:
            raise unavailable(self.rlog.name, exc) from None
        return got is not None

    def _cancel_typed(self, session_id: str) -> int:
        before = int(self.chunks.last_seq(session_id))

        async def cancel() -> None:
            if not await self.cancel_turn(session_id):  # nothing ran after all: answered as a command
                self._post(session_id, {"kind": "message", "text": "/cancel", "channel": "http",
                                        "images": "[]", "target": _target(None)})
        asyncio.get_running_loop().create_task(cancel())
        return before

    async def _hear_stops(self) -> None:
        """`df:stop` requests: a turn of this process named there is cancelled, and the asker told."""
        while True:
            pubsub = self.aio.pubsub()
            try:
                await pubsub.subscribe(STOP)
                async for msg in pubsub.listen():
                    if msg.get("type") != "message":
                        continue
                    sid, _, reply = msg["data"].decode().partition(" ")
                    if self.stop_turn(sid):
                        await self.aio.rpush(reply, "1")
                        await self.aio.expire(reply, 30)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis went away: subscribe again
                log.debug("stop requests interrupted: %s", exc)
                await asyncio.sleep(0.5)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()

    # -- running (the lease holder) ---------------------------------------------------------
    def _own(self, sid: str) -> None:
        task = self._owned.get(sid)
        if task is None or task.done():
            self._owned[sid] = asyncio.get_running_loop().create_task(self._hold(sid))

    def _keep(self, sid: str, held: bool) -> None:
        with self._holding_lock:
            (self._holding.add if held else self._holding.discard)(sid)

    async def _hold(self, sid: str) -> None:
        self._keep(sid, True)
        released = 0
        try:
            self.runner.take(sid, int(await self.aio.get(version_key(sid)) or 0))
            await self.rlog.prime(sid)
            with contextlib.suppress(Exception):  # BUSYGROUP: made before
                await self.aio.xgroup_create(queue_key(sid), GROUP, id="0", mkstream=True)
            await self._recover(sid)
            while True:
                try:
                    got: Any = await self.aio.xreadgroup(GROUP, self.me, {queue_key(sid): ">"}, count=1)
                    if not got or not got[0][1]:
                        await self.rlog.settle()
                        await self._saved(sid)
                        self._keep(sid, False)  # (a renewal after the release would take the lease again)
                        released = int(await self._release(
                            keys=[lock_key(sid), queue_key(sid), ACTIVE, version_key(sid)], args=[self.me, sid]))
                        if released != 0:
                            return
                        self._keep(sid, True)  # a message came meanwhile: held on
                        continue
                    entry, fields = got[0][1][0]
                    await self._one(sid, fields)
                    await self.rlog.settle()
                    await self.aio.xack(queue_key(sid), GROUP, entry)
                    await self.aio.xdel(queue_key(sid), entry)
                except self.rlog.errors as exc:
                    log.error("Redis is unreachable while session %s runs here (%s); retrying", sid, exc)
                    await asyncio.sleep(0.5)
        finally:
            self._keep(sid, False)
            self.rlog.release(sid)
            self.runner.give_back(sid, released if released > 0 else None)
            self._owned.pop(sid, None)

    async def _saved(self, sid: str) -> None:
        """The session's state is in PostgreSQL before the lease goes (while it is down: wait, holding it)."""
        from duckflow.channels.shared.pg import StoreUnavailable

        while True:
            try:
                await asyncio.to_thread(self.runner.flush)
                return
            except StoreUnavailable as exc:
                log.error("session %s waits to be saved: %s", sid, exc.message)

    async def _one(self, sid: str, fields: dict[Any, Any]) -> None:
        channel = _text(fields, "channel") or "http"
        target = _untarget(_text(fields, "target"))
        if _text(fields, "kind") == "answer":
            job_id, granted = _text(fields, "job"), _text(fields, "granted") == "1"
            by, note = _text(fields, "by"), _text(fields, "note") or None

            def job() -> AsyncIterator[Any]:
                return self.runner.answer(sid, job_id, granted, by=by, note=note)
        else:
            text, images = _text(fields, "text"), json.loads(_text(fields, "images") or "[]") or None

            def job() -> AsyncIterator[Any]:
                return self.runner.run_message(sid, text, channel, images)
        self._started()
        self._running.add(sid)
        try:
            reply = await self._run(sid, job)
        finally:
            self._running.discard(sid)
        outbox = self.outboxes.get(channel)
        if outbox is not None and target is not None:
            try:
                await outbox.deliver(target, reply)
            except Exception as exc:
                self.chunks.publish(sid, {"agent": channel, "type": "error", "data": {
                    "code": "send_failed", "message": f"could not send the reply to {channel}: {exc}"}})

    async def _recover(self, sid: str) -> None:
        """Entries read by a process that lost its lease (it died mid-turn): marked interrupted."""
        pending: Any = await self.aio.xpending_range(queue_key(sid), GROUP, min="-", max="+", count=1000)
        for p in pending:
            if (p["consumer"].decode() if isinstance(p["consumer"], bytes) else p["consumer"]) == self.me:
                continue
            self.chunks.publish(sid, {"agent": "duckflow", "type": "error", "data": {
                "code": "interrupted", "message": INTERRUPTED}})
            self.chunks.publish(sid, {"agent": "duckflow", "type": "done", "data": {
                "ending": "interrupted", "text": INTERRUPTED}})
            await self.rlog.settle()
            await self.aio.xack(queue_key(sid), GROUP, p["message_id"])
            await self.aio.xdel(queue_key(sid), p["message_id"])
            log.warning("session %s: a turn interrupted on %s was marked so", sid, p["consumer"])

    def _renew_all(self) -> None:
        """The renewer thread: every third of the lease, the leases of the sessions held here, in
        one pipeline. Off the event loop: a loop busy with 2,000 turns woke per-session renewals
        seconds late, other processes' sweepers took sessions still running and marked their turns
        interrupted (`duckflow bench server --workers 4` at 2,000 sessions in a burst: 13)."""
        script = self.sync.register_script(_RENEW)
        while not self._stop_renewing.wait(self.lease_s / 3):
            with self._holding_lock:
                held = sorted(self._holding)
            if not held:
                continue
            try:
                pipe = self.sync.pipeline(transaction=False)
                for sid in held:
                    script(keys=[lock_key(sid)], args=[self.me, self.lease_ms], client=pipe)
                answers = pipe.execute()
            except self.rlog.errors:
                continue  # Redis is away: try again at the next beat
            for sid, ok in zip(held, answers, strict=True):
                if not int(ok):
                    log.error("session %s: its lease was taken by another process", sid)

    async def _sweep(self) -> None:
        """Take the sessions with queued work whose holder went away (its lease expired), and the
        ones whose lease is this process's but no holder here reads their queue."""
        while True:
            await asyncio.sleep(max(0.2, self.lease_s / 2))
            try:
                members: Any = await self.aio.smembers(ACTIVE)
                for raw in members:
                    sid = raw.decode()
                    if sid in self._owned:
                        continue
                    # free, or mine with no holder here: a message posted while this process's
                    # holder was giving the lease back took the lease for it and found the holder
                    # still there (it ended a moment later): nobody would read the queue until
                    # the lease ran out
                    if await self.aio.set(lock_key(sid), self.me, nx=True, px=self.lease_ms) or \
                            await self.aio.get(lock_key(sid)) == self.me.encode():
                        self._own(sid)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the sweeper never stops: a dead process's sessions depend on it
                log.warning("sweeping the sessions with queued work failed: %s", exc)

    async def drain(self, timeout: float = 10.0) -> None:
        tasks = [t for t in self._owned.values() if not t.done()]
        if tasks:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), timeout)


def _target(target: Any) -> str:
    """A chat channel's reply target as JSON (it travels through Redis to the process that runs the
    turn); a channel's dataclass (SlackTarget, LINE's) keeps its class name to be made again."""
    import dataclasses

    if dataclasses.is_dataclass(target) and not isinstance(target, type):
        kind = type(target)
        return json.dumps({"__target__": f"{kind.__module__}:{kind.__qualname__}", **dataclasses.asdict(target)})
    try:
        return json.dumps(target)
    except (TypeError, ValueError):
        raise unavailable("the reply target", TypeError(f"{type(target).__name__} cannot be queued")) from None


def _untarget(raw: str) -> Any:
    import importlib

    data = json.loads(raw or "null")
    if isinstance(data, dict) and "__target__" in data:
        module, _, name = str(data.pop("__target__")).partition(":")
        if not module.startswith("duckflow.channels."):
            return None
        return getattr(importlib.import_module(module), name)(**data)
    return data
