"""`store.sqlite.close_all`: closers run together; every one runs; the first error comes after."""

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
