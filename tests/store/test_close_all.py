"""`store.sqlite`: close_all runs closers together, every one runs, the first error comes after;
connect makes WAL databases."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from duckflow.store.sqlite import close_all, connect


def test_closers_run_together_and_all_run_before_an_error_is_raised() -> None:
    together = threading.Barrier(3, timeout=10)  # passes only if three closers wait at once
    ran: list[str] = []

    def closer(name: str, fail: bool = False):  # type: ignore[no-untyped-def]
        def close() -> None:
            together.wait()
            ran.append(name)
            if fail:
                raise RuntimeError(f"{name} failed")
        return close

    with pytest.raises(RuntimeError, match="b failed"):
        close_all(closer("a"), closer("b", fail=True), closer("c"))
    assert sorted(ran) == ["a", "b", "c"]


def test_databases_closed_from_other_threads_are_closed_and_checkpointed(tmp_path: Path) -> None:
    conns = [connect(tmp_path / f"{i}.db") for i in range(4)]
    for c in conns:
        with c:
            c.execute("CREATE TABLE t(x)")
            c.execute("INSERT INTO t VALUES (1)")
    close_all(*(c.close for c in conns))
    for i, c in enumerate(conns):
        with pytest.raises(sqlite3.ProgrammingError):
            c.execute("SELECT 1")
        assert not (tmp_path / f"{i}.db-wal").exists()  # the last close checkpointed and removed the WAL
        assert sqlite3.connect(tmp_path / f"{i}.db").execute("SELECT x FROM t").fetchone() == (1,)
    close_all()  # nothing to close


def test_a_new_database_is_wal_with_normal_sync_and_stays_wal(tmp_path: Path) -> None:
    db = tmp_path / "sub" / "new.db"
    conn = connect(db)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    conn.execute("CREATE TABLE t (x)")
    conn.execute("INSERT INTO t VALUES (1)")
    conn.commit()
    conn.close()
    plain = sqlite3.connect(db)  # WAL is a property of the file, not of our connection
    assert plain.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert plain.execute("SELECT x FROM t").fetchall() == [(1,)]
    plain.close()
