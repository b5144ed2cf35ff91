"""Opens SQLite databases the way every Duckflow store needs them (WAL, busy timeout, FKs)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path


def connect(path: str | Path, *, check_same_thread: bool = False) -> sqlite3.Connection:
    """Open (and create) a database file with WAL journaling and a 5 s busy timeout.

    `":memory:"` is accepted for tests. Parent folders are created.
    """
    if str(path) != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), timeout=5.0, check_same_thread=check_same_thread)
    conn.row_factory = sqlite3.Row
    # synchronous first: switching a new file to WAL commits once through a rollback journal,
    # and under NORMAL that commit syncs the journal once, not twice (the same end state)
    try:  # the first statements read the file's header
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA journal_mode=WAL")
    except sqlite3.DatabaseError as exc:
        if type(exc) is not sqlite3.DatabaseError:  # locked, read-only, ...: not the file's content
            raise
        conn.close()  # not a database (garbage, or another program's file): say which file
        from duckflow.errors import DuckflowError

        raise DuckflowError(f"{path} is not a usable database ({exc})",
                            hint=f"move it aside (mv {path} {path}.damaged); Duckflow starts a new one") from None
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=5000")
    return conn


def close_all(*closers: Callable[[], object]) -> None:
    """Run the `closers` together, each in its own thread, and return when all have finished.

    Closing the last connection of a WAL database checkpoints it: the WAL and the database are
    synced to disk, which waits for the disk (tens of milliseconds each on a busy one). A run's
    four stores closed one after another wait four times; closed together, about once. The
    first error is raised once every closer has run.
    """
    if len(closers) < 2:
        for close in closers:
            close()
        return
    errors: list[BaseException] = []

    def run(close: Callable[[], object]) -> None:
        try:
            close()
        except BaseException as exc:  # re-raised below, once the others have run
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(c,), name="duckflow-close") for c in closers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
