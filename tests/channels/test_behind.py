"""The server's write-behind: session states and token counts written off the caller's thread, coalesced, never lost."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest

from duckflow.channels.behind import BehindCounter, BehindSessionStore
from duckflow.companion.state import AgentState
from duckflow.companion.store import SessionStore
from duckflow.core.token_guard import SQLiteCounter, TokenGuard


def test_saves_are_written_by_the_writer_coalesced_and_every_read_sees_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "sessions.db"
    store = BehindSessionStore(db)
    writers: list[tuple[int, int]] = []
    real = SessionStore.write_rows

    def spy(conn: sqlite3.Connection, rows: object) -> None:
        writers.append((threading.get_ident(), id(rows)))
        real(conn, rows)  # type: ignore[arg-type]

    monkeypatch.setattr(SessionStore, "write_rows", staticmethod(spy))
    s = AgentState("a", workspace=str(tmp_path))
    s.memory.note_file("x.py")  # the memory row goes with the first save only (unchanged after)
    for i in range(20):
        s.set_goal(f"goal {i}")
        store.save(s, {"i": i})
    t = AgentState("b", workspace=str(tmp_path / "other"))
    store.save(t)
    loaded = store.load("a")  # a read waits for what was saved before it
    assert loaded is not None and loaded[0].goal == "goal 19" and loaded[1] == {"i": 19}
    assert 2 <= len(writers) < 21  # coalesced: the newest state of a session wins
    assert all(w != threading.get_ident() for w, _ in writers)  # not on the caller's (the loop's) thread
    assert store.latest(str(tmp_path)) == "a" and {x.session_id for x in store.list()} == {"a", "b"}
    assert store.load_memory(str(tmp_path)) == s.memory.to_dict()  # kept although later saves left it out
    store.close()
    again = SessionStore(db)
    got = again.load("a")
    assert got is not None and got[0] == s and again.load("b") is not None
    again.close()


def test_token_totals_are_exact_in_memory_and_on_disk(tmp_path: Path) -> None:
    db = tmp_path / "tokens.db"
    earlier = SQLiteCounter(db)
    asyncio.run(earlier.add("s", 100))  # an earlier run of this session
    earlier.close()

    async def run() -> tuple[int, int, int]:
        guard = TokenGuard(warn_at=150, block_at=1000, counter=BehindCounter(SQLiteCounter(db)))
        counter = guard.counter
        assert isinstance(counter, BehindCounter)
        totals = [(await guard.add("s", 10)).total for _ in range(7)]
        assert totals == [110, 120, 130, 140, 150, 160, 170] and (await guard.status("s")).level == "warn"
        await counter.add("t", 5)
        await counter.reset("t")
        await counter.add("t", 3)
        counter.flush()
        on_disk = await counter.inner.get("s"), await counter.inner.get("t")
        counter.close()
        return on_disk[0], on_disk[1], await counter.get("s")

    assert asyncio.run(run()) == (170, 3, 170)
    again = SQLiteCounter(db)
    assert asyncio.run(again.get("s")) == 170 and asyncio.run(again.get("t")) == 3
    again.close()
