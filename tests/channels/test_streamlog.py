"""The chunk log: gap-free seqs per session, a ring in memory and SQLite, resume after a restart."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from duckflow.channels.streamlog import ChunkLog


def test_seqs_are_per_session_and_since_returns_exactly_the_rest(tmp_path: Path) -> None:
    log = ChunkLog(tmp_path / "c.db", ring=50)
    for i in range(10):
        log.publish("a", {"type": "delta", "data": {"text": str(i)}})
    log.publish("b", {"type": "delta", "data": {"text": "b"}})
    assert [s for s, _ in log.since("a", 7)] == [8, 9, 10]
    assert log.since("a", 10) == [] and [s for s, _ in log.since("b", 0)] == [1]
    body = json.loads(log.since("a", 0)[0][1])
    assert body["seq"] == 1 and body["time"] and body["agent"]


def test_the_ring_is_pruned_and_resume_reads_sqlite_after_a_restart(tmp_path: Path) -> None:
    log = ChunkLog(tmp_path / "c.db", ring=20)
    for i in range(100):
        log.publish("a", {"type": "delta", "data": {"text": str(i)}})
    log.close()
    again = ChunkLog(tmp_path / "c.db", ring=20)
    assert again.last_seq("a") == 100
    kept = again.since("a", 0)
    assert kept[-1][0] == 100 and len(kept) <= 20 + 20 // 4  # older ones pruned
    assert [s for s, _ in again.since("a", 90)] == list(range(91, 101))
    assert again.publish("a", {"type": "delta", "data": {"text": "next"}}) == 101  # no seq reuse


def test_wait_wakes_followers(tmp_path: Path) -> None:
    async def go() -> tuple[bool, bool]:
        log = ChunkLog(tmp_path / "c.db")
        idle = await log.wait("a", 0, 0.05)
        waiter = asyncio.create_task(log.wait("a", 0, 5))
        await asyncio.sleep(0.01)
        log.publish("a", {"type": "delta", "data": {"text": "x"}})
        return idle, await waiter

    assert asyncio.run(go()) == (False, True)


def test_idle_rings_leave_memory_but_not_the_log_and_a_waited_ring_stays(tmp_path: Path) -> None:
    async def go() -> None:
        log = ChunkLog(tmp_path / "c.db", max_in_memory=3)
        waiter = asyncio.create_task(log.wait("w", 0, 5))
        await asyncio.sleep(0.01)
        for sid in ("a", "b", "c", "d", "e"):
            for i in range(3):
                log.publish(sid, {"type": "delta", "data": {"text": f"{sid}{i}"}})
        assert len(log._streams) <= 4 and "w" in log._streams  # the waited one is kept
        assert "a" not in log._streams
        assert [s for s, _ in log.since("a", 1)] == [2, 3]  # from SQLite
        assert log.publish("a", {"type": "delta", "data": {"text": "a3"}}) == 4  # seq goes on
        log.publish("w", {"type": "delta", "data": {"text": "w"}})
        assert await waiter is True

    asyncio.run(go())


def test_chunks_are_written_by_the_writer_thread_and_none_is_lost(tmp_path: Path) -> None:
    """In a running loop SQLite writes happen off the loop's thread (a slow disk must not stall
    every stream); a sync flush waits for them, and a restart reads every chunk back."""
    import asyncio
    import threading

    log = ChunkLog(tmp_path / "c.db", ring=8, flush_delay=0.001)
    writers: list[int] = []
    real = log._write

    def spy(rows: list[tuple[str, int, str]]) -> None:
        writers.append(threading.get_ident())
        real(rows)

    log._write = spy  # type: ignore[method-assign]

    async def main() -> int:
        for i in range(30):
            log.publish("s", {"type": "delta", "data": {"text": str(i)}})
            if i % 10 == 9:
                await asyncio.sleep(0.01)
        return threading.get_ident()

    loop_thread = asyncio.run(main())
    assert writers and all(w != loop_thread for w in writers)
    log.flush()  # waits for the writer: everything is on disk now, read by another connection
    import sqlite3

    with sqlite3.connect(tmp_path / "c.db") as other:
        assert other.execute("SELECT MAX(seq) FROM chunks WHERE session_id = 's'").fetchone()[0] == 30
    log.close()
    again = ChunkLog(tmp_path / "c.db", ring=8)
    assert again.last_seq("s") == 30 and [s for s, _ in again.since("s", 25)] == [26, 27, 28, 29, 30]
    again.close()


def test_a_chunks_own_type_is_read_even_when_its_data_nests_another(tmp_path: Path) -> None:
    from duckflow.channels.streamlog import kind_of

    log = ChunkLog(tmp_path / "c.db", ring=50)
    # keys in any order, a nested "type" (tool arguments the model chose) before the chunk's own
    log.publish("a", {"data": {"arguments": {"type": "done"}}, "agent": "companion", "type": "tool_call"})
    log.publish("a", {"type": "done", "data": {"ending": "input"}})
    log.publish("a", {"data": {"type": "done"}})  # no type of its own
    (_, first), (_, second), (_, third) = log.since("a", 0)
    assert json.loads(first)["data"]["arguments"] == {"type": "done"}
    assert kind_of(first) == "tool_call" and kind_of(second) == "done" and kind_of(third) == ""
    assert list(json.loads(first)) == ["time", "agent", "type", "data", "seq"]


def test_since_returns_the_newest_chunks_from_a_long_ring(tmp_path: Path) -> None:
    log = ChunkLog(tmp_path / "c.db", ring=300)
    for i in range(1000):
        log.publish("a", {"type": "delta", "data": {"text": str(i)}})
    assert [s for s, _ in log.since("a", 999)] == [1000]
    assert [s for s, _ in log.since("a", 990)] == list(range(991, 1001))
    assert [json.loads(b)["data"]["text"] for _, b in log.since("a", 997)] == ["997", "998", "999"]
    assert [s for s, _ in log.since("a", 700)] == list(range(701, 1001))  # exactly the ring
    older = [s for s, _ in log.since("a", 600)]  # beyond the ring: what SQLite still keeps
    assert 600 < older[0] <= 701 and older == list(range(older[0], 1001))


def test_a_core_chunk_is_stored_exactly_as_its_dict_would_be(tmp_path: Path) -> None:
    """The companion's chunks are serialised once (their own JSON, seq replaced); the text equals
    what the dict of the same chunk gives, so followers, resume and the page see no change."""
    from duckflow.core.chunks import delta, error, notice, parse_chunk

    chunks = [delta("companion", "größer ✓ \"quoted\"\nnext line"),
              parse_chunk({"agent": "companion", "type": "tool_call",
                           "data": {"id": "c1", "name": "edit", "arguments": {"type": "done", "n": 1.5, "path": "a/ü.py"}}}),
              error("companion", "task_error", "boom", hint="retry"),
              notice("router", "route", "chat", primary_route="CHAT", confidence=0.9)]
    as_models, as_dicts = ChunkLog(tmp_path / "m.db"), ChunkLog(tmp_path / "d.db")
    for c in chunks:
        as_models.publish("s", c)
        as_dicts.publish("s", c.model_dump(mode="json"))
    assert as_models.since("s", 0) == as_dicts.since("s", 0)
    assert [json.loads(b)["seq"] for _, b in as_models.since("s", 0)] == [1, 2, 3, 4]
