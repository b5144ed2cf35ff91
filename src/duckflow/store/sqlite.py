"""Opens SQLite databases the way every Duckflow store needs them (WAL, busy timeout, FKs)."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

from duckflow.errors import DuckflowError

#: the database files `connect` opened in this process, so a damaged one can be named later
_OPENED: dict[str, None] = {}


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
        raise DuckflowError(f"{path} is not a usable database ({exc})",
                            hint=f"move it aside (mv {path} {path}.damaged); Duckflow starts a new one") from None
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=5000")
    if str(path) != ":memory:":
        key = os.path.abspath(path)
        _OPENED.pop(key, None)  # newest last
        _OPENED[key] = None
    return conn


def damaged_database_error(exc: BaseException) -> DuckflowError | None:
    """For an error that says a database is damaged ("database disk image is malformed": a
    valid header, damaged pages, met only when a query reads them), a one-line error naming
    the damaged file and the next step; None for any other error.

    The sqlite3 error does not say which file it came from: the files `connect` opened in this
    process are checked (`PRAGMA quick_check`, read-only), only now that one failed.
    """
    seen: BaseException | None = exc
    while seen is not None and type(seen) is not sqlite3.DatabaseError:
        seen = seen.__cause__ or seen.__context__  # e.g. wrapped by a worker thread's error
    if seen is None:
        return None
    damaged = [p for p in reversed(list(_OPENED)) if _is_damaged(p)]  # newest first
    if not damaged:
        return DuckflowError(f"a Duckflow database is damaged ({seen})",
                             hint="check the .db files in DUCKFLOW_HOME with "
                             "`sqlite3 FILE 'PRAGMA quick_check'` and move the damaged one aside")
    path = damaged[0]
    more = f" (also damaged: {', '.join(damaged[1:])})" if damaged[1:] else ""
    return DuckflowError(f"{path} is damaged ({seen}){more}",
                         hint=f"move it aside (mv {path} {path}.damaged); Duckflow starts a new "
                         f"one (`sqlite3 {path}.damaged .recover` may save its rows)")


def _is_damaged(path: str) -> bool:
    if not os.path.isfile(path):
        return False
    try:
        conn = sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True, timeout=1.0)
    except sqlite3.Error:
        return False
    try:
        rows = conn.execute("PRAGMA quick_check").fetchall()
    except sqlite3.OperationalError:  # locked, unreadable: not known to be damaged
        return False
    except sqlite3.DatabaseError:  # the check itself met a malformed page
        return True
    finally:
        conn.close()
    return [tuple(r) for r in rows] != [("ok",)]


#: connections `release` left open because the process ends next (see `close_all`)
_KEPT: list[sqlite3.Connection] = []
_ENDING: list[bool] = []


def release(conn: sqlite3.Connection) -> None:
    """A store's `close`: close `conn`; but inside `close_all(..., process_ends=True)`, end its
    transaction (rolled back, as `close` would) and leave it open for the process's exit.

    Closing the last connection of a WAL database checkpoints it: the WAL is copied into the
    database, both are synced, and the -wal and -shm files are deleted. That is ~5 ms of a
    scripted `duckflow run` on an idle disk and tens of milliseconds on a busy one, for nothing
    the user reads. Left open until the process ends, committed transactions stay in the WAL,
    where the next connection reads them (SQLite's own WAL recovery; it also checkpoints by
    itself every 1,000 pages). Durability is unchanged: under `synchronous=NORMAL` a commit is
    not synced before a checkpoint in either case.
    """
    if _ENDING:
        if conn.in_transaction:
            conn.rollback()
        _KEPT.append(conn)
    else:
        conn.close()


def close_all(*closers: Callable[[], object], process_ends: bool = False) -> None:
    """Run the `closers` together, each in its own thread, and return when all have finished.

    Closing the last connection of a WAL database checkpoints it: the WAL and the database are
    synced to disk, which waits for the disk (tens of milliseconds each on a busy one). A run's
    four stores closed one after another wait four times; closed together, about once. The
    first error is raised once every closer has run.

    `process_ends=True` (the `duckflow` command's last close before its fast exit,
    channels/cli/fastexit.py): the stores' connections are not closed at all (see `release`).
    """
    if process_ends:
        _ENDING.append(True)
        try:
            close_all(*closers)
        finally:
            _ENDING.pop()
        return
    if len(closers) < 2 or _ENDING:  # one at a time when no close waits for the disk
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
