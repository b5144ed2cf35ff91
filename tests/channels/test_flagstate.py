"""The server's orchestra state: flags read once, kept in memory, written off the loop only when they change."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from duckflow.channels.flagstate import ServerState
from duckflow.orchestra.router import SessionFlags
from duckflow.orchestra.state import OrchestraState


def test_flags_are_written_by_the_writer_thread_only_on_change_and_survive_a_restart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "orchestra.db"
    OrchestraState(db).save_flags("http", "s0", SessionFlags(True, "CODE"))  # written by an earlier run
    state = ServerState(db)
    writes: list[tuple[str, int]] = []
    real = OrchestraState.save_flags

    def spy(self: OrchestraState, channel: str, sid: str, flags: SessionFlags) -> None:
        writes.append((sid, threading.get_ident()))
        real(self, channel, sid, flags)

    monkeypatch.setattr(OrchestraState, "save_flags", spy)
    assert state.flags("http", "s0") == SessionFlags(True, "CODE")  # read from disk once
    state.save_flags("http", "s0", SessionFlags(True, "CODE"))  # unchanged: no write
    for route in ("CHAT", "CHAT", "CODE", "CODE", "CHAT"):
        state.save_flags("http", "s1", SessionFlags(False, route))
    state.flush()
    assert [sid for sid, _ in writes] == ["s1", "s1", "s1"]  # only the three changes
    assert all(t != threading.get_ident() for _, t in writes)  # never on the caller's (the loop's) thread
    assert state.flags("http", "s1") == SessionFlags(False, "CHAT")
    assert state.flags("slack", "s1") == SessionFlags()  # one state per (channel, session)
    state.close()
    again = OrchestraState(db)
    assert again.flags("http", "s1") == SessionFlags(False, "CHAT") and again.flags("http", "s0").local_only
    again.close()


def test_an_in_memory_database_is_written_in_place() -> None:
    state = ServerState(":memory:")
    state.save_flags("line", "u1", SessionFlags(True, "CHAT"))
    assert OrchestraState.flags(state, "line", "u1") == SessionFlags(True, "CHAT")  # on its one connection
    state.close()


def test_the_coding_task_is_kept_with_the_flags_and_an_older_database_gets_its_column(tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "orchestra.db"
    old = sqlite3.connect(db)  # the table as an earlier version made it
    old.execute("CREATE TABLE session_flags (channel TEXT NOT NULL, session_id TEXT NOT NULL, local_only INTEGER "
                "NOT NULL DEFAULT 0, prev_route TEXT NOT NULL DEFAULT 'CHAT', updated_at REAL NOT NULL, "
                "PRIMARY KEY (channel, session_id))")
    old.execute("INSERT INTO session_flags VALUES ('cli', 's0', 0, 'CODE', 0)")
    old.commit()
    old.close()
    state = OrchestraState(db)
    assert state.flags("cli", "s0") == SessionFlags(False, "CODE", "")
    state.save_flags("cli", "s0", SessionFlags(False, "CODE", "open"))
    state.close()
    server = ServerState(db)
    assert server.flags("cli", "s0").coding == "open"
    server.save_flags("cli", "s0", SessionFlags(False, "CODE", "ended"))
    server.flush()
    server.close()
    assert OrchestraState(db).flags("cli", "s0") == SessionFlags(False, "CODE", "ended")
