"""The channel manager: identities to sessions, one queue per session, and paced, split, retried sends.

Every channel (HTTP, Slack, LINE) hands a person's message to `submit()`. Messages of one
session run one after another (a queue and a worker per session); every chunk of the run goes
into the chunk log (what SSE and the web page read), and a turn a model answered ends with the
quiet `turn_end` line (channels/turnclock.py); a chat channel's reply ends with "(answered by
MODEL)". Each run is its own task: `stop_turn()` (the web page's Stop) cancels it at once. A chat
command sent while a run works is answered at once (`runner.command_now`), as the terminal does,
not queued behind it. Chat channels register an `Outbox`: when a
run ends (or stops at an approval) its text goes out through the outbox's sender, split to the
channel's length limit, paced by a per-channel rate limit and retried with backoff on errors.
What goes out to a chat service is masked by the sanitizer first (a chat service is a cloud).

First chunks first: a run that has published its first chunk (the route) waits, at most
`FIRST_CHUNK_WAIT_S`, until every run started meanwhile has published its own, before it goes
on to the model work — as long as routing makes progress: when no run was routed for
`ROUTE_STALL_S` (one waits on a slow classifier), it goes on. Under a burst of messages every person sees their message routed before
any one run's companion turn takes the event loop (measured with `duckflow bench server`: the
500th first chunk no longer waits behind 499 companion turns).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from duckflow.channels.streamlog import ChunkLog

log = logging.getLogger("duckflow.channels")
FIRST_CHUNK_WAIT_S = 0.5  # the longest a routed run yields to runs not routed yet
ROUTE_STALL_S = 0.05  # ... and only while some run got routed within this long
GO_ON = "Send a message to go on."  # after the cancelled line (channels/cancelled.py)


@dataclass
class Reply:
    """What a chat channel sends for one run: text parts and, if any, the approval waiting."""

    text: str
    approval: dict[str, Any] | None = None
    ending: str = ""


class Sender(Protocol):
    async def send(self, target: Any, part: str, approval: dict[str, Any] | None) -> None: ...


def split_text(text: str, limit: int) -> list[str]:
    """Split at paragraph, then line, then word boundaries so that each part is <= limit chars."""
    text = text.strip()
    if len(text) <= limit:
        return [text] if text else []
    parts: list[str] = []
    while len(text) > limit:
        window = text[:limit]
        cut = max(window.rfind("\n\n"), window.rfind("\n"))
        if cut < limit // 2:
            cut = window.rfind(" ")
        if cut < limit // 2:
            cut = limit
        parts.append(text[:cut].rstrip())
        text = text[cut:].lstrip()
    if text:
        parts.append(text)
    return parts


class RateLimiter:
    """A token bucket: `rate` sends per second on average, bursts up to `burst`."""

    def __init__(self, rate: float, burst: int = 1) -> None:
        self.rate = rate
        self.burst = burst
        self._tokens = float(burst)
        self._at = time.monotonic()
        self._lock = asyncio.Lock()

    async def acquire(self) -> None:
        async with self._lock:
            while True:
                now = time.monotonic()
                self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
                self._at = now
                if self._tokens >= 1:
                    self._tokens -= 1
                    return
                await asyncio.sleep((1 - self._tokens) / self.rate)


def masked_for_cloud(text: str, approval: dict[str, Any] | None) -> tuple[str, dict[str, Any] | None]:
    """`text` and every string of `approval` through the sanitizer (one numbering for both);
    the job id and the button values are kept as they are (they come back in clicks)."""
    from duckflow.security.sanitizer import default_sanitizer

    san = default_sanitizer()
    mapping: dict[str, str] = {}

    def mask(value: Any, key: str = "") -> Any:
        if isinstance(value, str):
            return value if key in ("job_id", "status", "session_id") else san.mask(value, mapping).text
        if isinstance(value, dict):
            return {k: mask(v, k) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [mask(v) for v in value]
        return value

    return mask(text), mask(approval) if approval is not None else None


@dataclass
class Outbox:
    """How one chat channel sends: its sender, length limit, pace and retry policy."""

    sender: Sender
    limit: int
    rate: float = 1.0
    burst: int = 3
    retries: int = 3
    backoff_s: float = 0.5
    limiter: RateLimiter = field(init=False)

    def __post_init__(self) -> None:
        self.limiter = RateLimiter(self.rate, self.burst)

    async def deliver(self, target: Any, reply: Reply) -> None:
        # a chat service is a cloud: the reply (placeholders restored after the model call) and
        # the approval card (diff, rationale) are masked again before they leave, as for a model
        text, approval_masked = masked_for_cloud(reply.text, reply.approval)
        parts = split_text(text, self.limit) or ([""] if approval_masked else [])
        for i, part in enumerate(parts):
            approval = approval_masked if i == len(parts) - 1 else None
            await self._send_one(target, part, approval)

    async def _send_one(self, target: Any, part: str, approval: dict[str, Any] | None) -> None:
        for attempt in range(self.retries + 1):
            await self.limiter.acquire()
            try:
                await self.sender.send(target, part, approval)
                return
            except Exception as exc:  # a send error: wait and retry, then give up loudly
                if attempt >= self.retries:
                    log.error("channel send failed after %d attempts: %s", attempt + 1, exc)
                    raise
                await asyncio.sleep(self.backoff_s * (2 ** attempt))


class IdentityMap:
    """Channel identity (e.g. `slack:C1:1700.1`) → session id, kept in SQLite."""

    def __init__(self, path: str | Path) -> None:
        self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._conn.execute("CREATE TABLE IF NOT EXISTS identities (identity TEXT PRIMARY KEY, "
                           "session_id TEXT NOT NULL, channel TEXT NOT NULL, created REAL NOT NULL)")
        self._lock = threading.Lock()

    def get(self, identity: str) -> str | None:
        with self._lock:
            row = self._conn.execute("SELECT session_id FROM identities WHERE identity = ?",
                                     (identity,)).fetchone()
        return str(row[0]) if row else None

    def put(self, identity: str, session_id: str, channel: str) -> None:
        with self._lock:
            self._conn.execute("INSERT OR REPLACE INTO identities VALUES (?, ?, ?, ?)",
                               (identity, session_id, channel, time.time()))

    def all(self) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._conn.execute("SELECT identity, session_id, channel, created FROM identities "
                                      "ORDER BY created DESC").fetchall()
        return [{"identity": i, "session_id": s, "channel": c, "created": t} for i, s, c, t in rows]

    def close(self) -> None:
        with self._lock:
            self._conn.close()


Job = Callable[[], AsyncIterator[Any]]  # core Chunks, or dicts shaped like them


_REPLY_PARTS = frozenset({"reply", "approval", "error", "done"})  # what a chat channel's reply is made of


def _type_and_data(c: Any) -> tuple[Any, dict[str, Any]]:
    """A chunk's type, and its data when the reply needs it (a core Chunk's only then: not per delta)."""
    if isinstance(c, dict):
        return c.get("type"), c.get("data") or {}
    return c.type, c.data.model_dump(mode="json") if c.type in _REPLY_PARTS else {}


CLOCKED = frozenset({"notice", "progress", "tool_call", "tool_response", "usage", "done"})  # what TurnClock reads
CHAT_NOTICES = frozenset({"router", "delegated"})  # notices a chat channel's reply carries


def _notice_code(c: Any) -> str:
    return str((c.get("data") or {}).get("code", "")) if isinstance(c, dict) else str(c.data.code)


def _lines(said: Any, c: Any, data: dict[str, Any]) -> list[Any]:
    """The presentation layer's lines for a chunk; a dict it cannot read is kept as its text."""
    from duckflow.channels.present import Line
    from duckflow.core.chunks import parse_chunk

    try:
        return list(said.feed(c if not isinstance(c, dict) else parse_chunk(c)))
    except ValueError:
        return [Line("prose", str(data.get("text", "")))] if data.get("text") else []


class ChannelManager:
    """Queues, runs and publishes every message of every channel."""

    def __init__(self, runner: Any, chunks: ChunkLog, identities: IdentityMap) -> None:
        self.runner = runner
        self.chunks = chunks
        self.identities = identities
        self.outboxes: dict[str, Outbox] = {}
        self._queues: dict[str, asyncio.Queue[tuple[Job, str, Any]]] = {}
        self._workers: dict[str, asyncio.Task[None]] = {}
        self._running: set[str] = set()
        self._turns: dict[str, asyncio.Task[Reply]] = {}  # the running turn of each session (stop_turn() cancels it)
        self._unrouted = 0  # runs started (or about to) that have not published a chunk yet
        self._routed = asyncio.Event()
        self._routed.set()
        self._last_routed = 0.0  # time.monotonic() of the last first chunk
        self._watcher: asyncio.Task[None] | None = None

    # -- sessions -------------------------------------------------------------------------
    def session_for(self, channel: str, identity: str) -> str:
        """The session of a channel identity, created on first contact (or when the one it had is
        gone or belongs to another workspace: the identities file can be shared by servers)."""
        sid = self.identities.get(identity)
        if sid is None or not self.runner.exists(sid) or not self.runner.belongs_here(sid):
            sid = self.runner.new_session()
            self.identities.put(identity, sid, channel)
        return sid

    def busy(self, session_id: str) -> bool:
        q = self._queues.get(session_id)
        return session_id in self._running or (q is not None and not q.empty())

    # -- work -----------------------------------------------------------------------------
    def submit(self, session_id: str, text: str, channel: str = "http", *, target: Any = None,
               images: list[str] | None = None) -> int:
        """Queue a message; returns the session's last seq before its run (follow from there).
        On the web a chat command while the session works is answered at once, not queued
        (`runner.command_now`); a chat service's reply goes out when a run ends, so there it waits."""
        now = getattr(self.runner, "command_now", None)
        if now is not None and channel == "http" and session_id in self._running and not images:
            if text.strip().lower() == "/cancel" and self.stop_turn(session_id):  # as the terminal's /cancel
                return self.chunks.last_seq(session_id)
            said = now(session_id, text, channel)
            if said is not None:
                before = self.chunks.last_seq(session_id)
                for c in said:
                    self.chunks.publish(session_id, c)
                return before

        def job() -> AsyncIterator[Any]:
            return self.runner.run_message(session_id, text, channel, images)
        return self._enqueue(session_id, job, channel, target)

    def submit_answer(self, session_id: str, job_id: str, granted: bool, *, by: str,
                      channel: str = "http", target: Any = None, note: str | None = None) -> int:
        def job() -> AsyncIterator[Any]:
            return self.runner.answer(session_id, job_id, granted, by=by, note=note)
        return self._enqueue(session_id, job, channel, target)

    def _enqueue(self, session_id: str, job: Job, channel: str, target: Any) -> int:
        before = self.chunks.last_seq(session_id)
        q = self._queues.get(session_id)
        if q is None:
            q = self._queues[session_id] = asyncio.Queue()
        q.put_nowait((job, channel, target))
        worker = self._workers.get(session_id)
        if worker is None or worker.done():
            self._started()  # its run starts at once: counted now, before its task first runs
            self._workers[session_id] = asyncio.create_task(self._work(session_id, q))
        return before

    def _started(self) -> None:
        self._unrouted += 1
        self._routed.clear()

    def _route_done(self) -> bool:
        """One run fewer to wait for; True when none is left."""
        self._unrouted = max(0, self._unrouted - 1)
        self._last_routed = time.monotonic()
        if self._unrouted == 0:
            self._routed.set()
        return self._unrouted == 0

    async def _first_published(self) -> None:
        """A run published its first chunk: let its follower write it, and the runs not routed yet
        publish theirs, before this run goes on to its model work."""
        if self._route_done():
            # one turn of the loop: the SSE follower woken by the publish writes the route chunk
            # now, not after the companion turn (which may not yield until its model streams)
            await asyncio.sleep(0)
            return
        if self._watcher is None or self._watcher.done():
            self._watcher = asyncio.create_task(self._watch_routing())
        with contextlib.suppress(asyncio.TimeoutError):  # the watcher ends every wait; this is a backstop
            await asyncio.wait_for(self._routed.wait(), FIRST_CHUNK_WAIT_S + ROUTE_STALL_S)

    async def _watch_routing(self) -> None:
        """One timer for all waiting runs: release them when routing stalls or the wait is up."""
        deadline = time.monotonic() + FIRST_CHUNK_WAIT_S
        while not self._routed.is_set():
            await asyncio.sleep(ROUTE_STALL_S)
            now = time.monotonic()
            if now - self._last_routed >= ROUTE_STALL_S or now >= deadline:
                self._routed.set()  # the runs not routed yet wait on something slow: go on

    async def _work(self, session_id: str, q: asyncio.Queue[tuple[Job, str, Any]]) -> None:
        first = True
        while not q.empty():
            job, channel, target = q.get_nowait()
            if not first:
                self._started()
            first = False
            self._running.add(session_id)
            try:
                reply = await self._run(session_id, job)
            finally:
                self._running.discard(session_id)
            outbox = self.outboxes.get(channel)
            if outbox is not None and target is not None:
                try:
                    await outbox.deliver(target, reply)
                except Exception as exc:
                    self.chunks.publish(session_id, {"agent": channel, "type": "error", "data": {
                        "code": "send_failed", "message": f"could not send the reply to {channel}: {exc}"}})
        self._workers.pop(session_id, None)
        if q.empty():  # an idle session keeps no queue (the next message makes a new one)
            self._queues.pop(session_id, None)

    def stop_turn(self, session_id: str) -> bool:
        """Cancel the session's running turn at once (the Stop button); True when one was running.

        Its task is cancelled where it waits (the model, a tool, the gate); the companion notes the
        cancelled step (state kept, "continue" goes on), checkpoints stay, and the stream ends with a
        `cancelled` notice and a `done` whose ending is `cancelled`."""
        turn = self._turns.get(session_id)
        if turn is None or turn.done():
            return False
        turn.cancel()
        return True

    async def cancel_turn(self, session_id: str) -> bool:
        """Stop from the API: `stop_turn` here (several processes: wherever the turn runs, lease.py)."""
        return self.stop_turn(session_id)

    async def _run(self, session_id: str, job: Job) -> Reply:
        """One run as its own task, so that `stop_turn()` cancels it and nothing else; a cancelled
        one ends with the line that says what it changed (channels/cancelled.py)."""
        from duckflow.channels.cancelled import cancelled_line
        from duckflow.workspace.turnchanges import TurnChanges

        changes = TurnChanges(str(getattr(self.runner, "workspace", "") or "."))
        turn = asyncio.create_task(self._publish(session_id, job, changes))
        self._turns[session_id] = turn
        try:
            return await turn
        except asyncio.CancelledError:
            me = asyncio.current_task()
            if me is not None and me.cancelling():  # the server stops: not a person's Stop
                raise
            said = f"{cancelled_line(changes.files())} {GO_ON}"
            self.chunks.publish(session_id, {"agent": "duckflow", "type": "notice", "data": {
                "code": "cancelled", "message": said, "details": {}}})
            self.chunks.publish(session_id, {"agent": "duckflow", "type": "done",
                                             "data": {"ending": "cancelled", "text": said}})
            return Reply(said, None, "cancelled")
        finally:
            if self._turns.get(session_id) is turn:
                del self._turns[session_id]

    async def _publish(self, session_id: str, job: Job, changes: Any = None) -> Reply:
        from duckflow.channels.cancelled import watch_chunk
        from duckflow.channels.present import Presenter
        from duckflow.channels.turnclock import TurnClock

        said = Presenter()  # replies without result lines or engine ids; one line per action
        clock = TurnClock()  # the quiet line that ends a turn (time, tokens, where the time went)
        texts: list[str] = []
        approval: dict[str, Any] | None = None
        ending = answered = ""
        routed = False
        try:
            async for c in job():
                if not isinstance(c, dict) and c.type in CLOCKED:
                    ended = clock.feed(c)
                    if ended:  # the turn's done: its end line goes just before it
                        self.chunks.publish(session_id, {"agent": "duckflow", "type": "notice", "data": {
                            "code": "turn_end", "message": ended, "details": {}}})
                        answered = clock.answered  # a chat channel's reply ends with it, quietly
                self.chunks.publish(session_id, c)
                watch_chunk(changes, c)
                if not routed:
                    routed = True
                    await self._first_published()
                t, d = _type_and_data(c)
                if t in ("tool_call", "tool_response", "reply"):  # in the words every channel uses
                    for ln in _lines(said, c, d):
                        if ln.kind == "action":
                            texts.append(f"● {ln.text}")
                        elif ln.kind == "prose" and ln.text:
                            texts.append(ln.text)
                elif t == "notice" and _notice_code(c) in CHAT_NOTICES:  # who answers, or the router's answer
                    texts += [ln.text for ln in _lines(said, c, d) if ln.kind == "note" and ln.text]
                elif t == "approval" and d.get("phase") == "request":
                    approval = d
                elif t == "error":
                    texts.append(f"error: {d.get('message', '')}")
                elif t == "done":
                    ending = str(d.get("ending", ""))
        except Exception as exc:  # never leave a follower hanging without an end
            from duckflow.store.sqlite import damaged_database_error

            damaged = damaged_database_error(exc)  # a damaged database is named, with the next step
            if damaged is None:
                log.exception("run of session %s failed", session_id)
            else:
                log.error("run of session %s failed: %s", session_id, damaged)
            error = {"code": "internal_error", "message": str(exc)} if damaged is None else {
                "code": "database_damaged", "message": damaged.message, "hint": damaged.hint}
            self.chunks.publish(session_id, {"agent": "duckflow", "type": "error", "data": error})
            self.chunks.publish(session_id, {"agent": "duckflow", "type": "done",
                                             "data": {"ending": "error", "text": error["message"]}})
            ending = "error"
        finally:
            if not routed:  # it ended (or was cancelled) without a chunk: nobody waits for it
                self._route_done()
        if answered and texts:
            texts.append(f"({answered})")
        return Reply("\n\n".join(t for t in texts if t), approval if ending == "approval" else None, ending)

    async def drain(self, timeout: float = 10.0) -> None:
        """Wait for queued work (tests, shutdown)."""
        workers = [w for w in self._workers.values() if not w.done()]
        if workers:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.gather(*workers, return_exceptions=True), timeout)

