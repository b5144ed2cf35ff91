"""The channel manager's parts: splitting, pacing, retries, identities, per-session order."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from duckflow.channels.manager import (
    ChannelManager,
    IdentityMap,
    Outbox,
    RateLimiter,
    Reply,
    split_text,
)
from duckflow.channels.streamlog import ChunkLog


def test_split_text_keeps_every_character_and_respects_the_limit() -> None:
    text = "\n\n".join(f"paragraph {i} " + "word " * 50 for i in range(30))
    parts = split_text(text, 400)
    assert all(0 < len(p) <= 400 for p in parts)
    assert "".join(parts).replace(" ", "").replace("\n", "") == text.replace(" ", "").replace("\n", "")
    assert split_text("x" * 1000, 300) == ["x" * 300] * 3 + ["x" * 100]  # no boundary: hard cut
    assert split_text("short", 10) == ["short"] and split_text("  ", 10) == []


class FlakySender:
    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.sent: list[tuple[str, Any]] = []
        self.attempts = 0

    async def send(self, target: Any, part: str, approval: dict[str, Any] | None) -> None:
        self.attempts += 1
        if self.failures:
            self.failures -= 1
            raise ConnectionError("boom")
        self.sent.append((part, approval))


def test_outbox_retries_send_errors_then_gives_up_loudly() -> None:
    ok = FlakySender(failures=2)
    box = Outbox(ok, limit=10, rate=1000, burst=10, retries=3, backoff_s=0.001)
    asyncio.run(box.deliver("t", Reply("a" * 25, approval={"job_id": "j"})))
    assert [p for p, _ in ok.sent] == ["a" * 10, "a" * 10, "a" * 5]
    assert [a for _, a in ok.sent] == [None, None, {"job_id": "j"}]  # the card rides on the last part
    assert ok.attempts == 5
    bad = FlakySender(failures=99)
    with pytest.raises(ConnectionError):
        asyncio.run(Outbox(bad, limit=10, rate=1000, burst=10, retries=2, backoff_s=0.001)
                    .deliver("t", Reply("hi")))
    assert bad.attempts == 3


def test_rate_limiter_paces_sends_after_the_burst() -> None:
    async def go() -> float:
        limiter = RateLimiter(rate=20, burst=2)
        t0 = time.monotonic()
        for _ in range(6):
            await limiter.acquire()
        return time.monotonic() - t0

    assert asyncio.run(go()) >= 4 / 20 * 0.9  # 2 at once, then 4 at 20/s


def test_identity_map_survives_a_restart(tmp_path: Path) -> None:
    ids = IdentityMap(tmp_path / "ids.db")
    ids.put("slack:C1:1.2", "s1", "slack")
    ids.close()
    again = IdentityMap(tmp_path / "ids.db")
    assert again.get("slack:C1:1.2") == "s1" and again.get("line:user:U") is None
    assert again.all()[0]["channel"] == "slack"


class SlowRunner:
    """Runs of one session must not interleave: each yields a start, waits, yields an end."""

    def __init__(self) -> None:
        self.made = 0

    def exists(self, sid: str) -> bool:
        return True

    def belongs_here(self, sid: str) -> bool:
        return True

    def new_session(self) -> str:
        self.made += 1
        return f"s{self.made}"

    async def run_message(self, sid: str, text: str, channel: str, images: Any) -> Any:
        yield {"type": "notice", "data": {"message": f"start {text}"}}
        await asyncio.sleep(0.05)
        yield {"type": "reply", "data": {"text": f"answer {text}"}}
        yield {"type": "done", "data": {"ending": "input"}}


def test_messages_of_one_session_run_in_order_and_chunks_get_one_seq(tmp_path: Path) -> None:
    async def go() -> list[str]:
        log = ChunkLog(tmp_path / "c.db")
        mgr = ChannelManager(SlowRunner(), log, IdentityMap(tmp_path / "i.db"))
        sid = mgr.session_for("slack", "slack:C:1")
        assert mgr.session_for("slack", "slack:C:1") == sid
        mgr.submit(sid, "one")
        mgr.submit(sid, "two")
        assert mgr.busy(sid)
        await mgr.drain()
        assert not mgr.busy(sid) and mgr._queues == {} and mgr._workers == {}  # idle: nothing kept
        import json

        rows = log.since(sid, 0)
        assert [s for s, _ in rows] == list(range(1, 7))
        return [json.loads(b)["data"].get("message") or json.loads(b)["data"].get("text") or "" for _, b in rows]

    texts = asyncio.run(go())
    assert texts[:3] == ["start one", "answer one", ""] and texts[3:5] == ["start two", "answer two"]


class BusyRunner:
    """Each run routes (its first chunk), then works on the event loop without yielding (like a
    companion turn building its prompt); `order` records what happened in which order."""

    def __init__(self, order: list[str], fail: set[str] | None = None) -> None:
        self.order = order
        self.fail = fail or set()

    def exists(self, sid: str) -> bool:
        return True

    def belongs_here(self, sid: str) -> bool:
        return True

    async def run_message(self, sid: str, text: str, channel: str, images: Any) -> Any:
        if text in self.fail:  # ends before its first chunk: no one must keep waiting for it
            raise RuntimeError("broken before routing")
        self.order.append(f"route {text}")
        yield {"type": "notice", "data": {"message": f"route {text}"}}
        self.order.append(f"work {text}")
        yield {"type": "done", "data": {"ending": "input"}}


def test_a_burst_of_messages_is_routed_before_any_run_goes_on_to_its_work(tmp_path: Path) -> None:
    """First chunks first: under a burst, the 50th person's route chunk does not wait behind 49
    companion turns (what `duckflow bench server` measures as time to first chunk)."""
    order: list[str] = []

    async def go() -> bool:
        mgr = ChannelManager(BusyRunner(order, fail={"m3"}), ChunkLog(tmp_path / "c.db"),
                             IdentityMap(tmp_path / "i.db"))
        for i in range(50):
            mgr.submit(f"s{i}", f"m{i}")
        await mgr.drain()
        return mgr._routed.is_set()

    nobody_waits = asyncio.run(go())
    routes = [i for i, e in enumerate(order) if e.startswith("route")]
    works = [i for i, e in enumerate(order) if e.startswith("work")]
    assert len(routes) == len(works) == 49  # m3 failed before routing, and held nobody up
    assert max(routes) < min(works)
    assert nobody_waits  # the failed run no longer counts as one to wait for
    order.clear()

    async def one() -> None:  # a lone message goes straight on to its work
        mgr = ChannelManager(BusyRunner(order), ChunkLog(tmp_path / "d.db"), IdentityMap(tmp_path / "j.db"))
        mgr.submit("s", "alone")
        await mgr.drain()

    asyncio.run(one())
    assert order == ["route alone", "work alone"]


class SlowRouteRunner(BusyRunner):
    """`slow` reaches its first chunk only when the test says so (a classifier taking its time)."""

    def __init__(self, order: list[str], release: asyncio.Event) -> None:
        super().__init__(order)
        self.release = release

    async def run_message(self, sid: str, text: str, channel: str, images: Any) -> Any:
        if text == "slow":
            await self.release.wait()
        async for c in super().run_message(sid, text, channel, images):
            yield c


def test_a_routed_run_does_not_wait_on_a_run_whose_routing_stalls(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from duckflow.channels import manager

    monkeypatch.setattr(manager, "FIRST_CHUNK_WAIT_S", 3600.0)  # only the stall rule can let `fast` go on
    order: list[str] = []

    async def go() -> None:
        release = asyncio.Event()
        mgr = ChannelManager(SlowRouteRunner(order, release), ChunkLog(tmp_path / "c.db"),
                             IdentityMap(tmp_path / "i.db"))
        mgr.submit("a", "slow")
        mgr.submit("b", "fast")

        async def fast_worked() -> None:
            while "work fast" not in order:
                await asyncio.sleep(0.005)

        await asyncio.wait_for(fast_worked(), 30)  # liveness: without the stall rule it waits an hour
        release.set()
        await mgr.drain()

    asyncio.run(go())
    assert order == ["route fast", "work fast", "route slow", "work slow"]
