"""`store.sqlite`: close_all runs closers together, every one runs, the first error comes after;
connect makes WAL databases."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from duckflow.store.sqlite import close_all, connect, release


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


def test_a_process_that_ends_next_leaves_its_wal_and_loses_no_commit(tmp_path: Path) -> None:
    """close_all(process_ends=True) then os._exit (the `duckflow` command's fast exit): no
    checkpoint, the -wal file stays; the next connection reads every committed row and none of
    the transaction that was still open."""
    import os
    import subprocess
    import sys

    db = tmp_path / "s.db"
    child = (
        "import os, sys\n"
        "from duckflow.store.sqlite import close_all, connect, release\n"
        f"a, b = connect({str(db)!r}), connect({str(db)!r})\n"
        "with a:\n"
        "    a.execute('CREATE TABLE t(x)')\n"
        "    a.execute('INSERT INTO t VALUES (1)')\n"
        "b.execute('INSERT INTO t VALUES (2)')  # begun, never committed\n"
        "close_all(lambda: release(a), lambda: release(b), process_ends=True)\n"
        "a.execute('SELECT 1')  # still open: nothing was closed\n"
        "os._exit(0)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"))
    proc = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "s.db-wal").exists()  # not checkpointed
    again = connect(db)
    assert [r[0] for r in again.execute("SELECT x FROM t")] == [1]
    close_all(lambda: release(again))  # an ordinary close: checkpointed, the WAL removed
    assert not (tmp_path / "s.db-wal").exists()
