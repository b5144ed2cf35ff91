"""Opens SQLite databases the way every Duckflow store needs them (WAL, busy timeout, FKs)."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def connect(path: str | Path, *, check_same_thread: bool = False) -> sqlite3.Connection:
    """Open (and create) a database file with WAL journaling and a 5 s busy timeout.

    `":memory:"` is accepted for tests. Parent folders are created.
    """
    if str(path) != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), timeout=5.0, check_same_thread=check_same_thread)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=5000")
    return conn
