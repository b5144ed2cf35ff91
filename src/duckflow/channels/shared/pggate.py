"""The gate's jobs, audit rows and auto-approve scopes in PostgreSQL, behind `GateStore`'s interface.

The gate's parts write through `store.tx()` with SQLite's `?` placeholders; `PgGateStore` hands
them a small adapter of a psycopg transaction that speaks the same way (placeholders, `rowcount`,
`lastrowid` through `RETURNING id`, rows read by column name). Every read goes to the database,
so a decision made on another process is seen by the next call, as with SQLite.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from duckflow.channels.shared.pg import Database
from duckflow.gate.request import Job
from duckflow.gate.store import GateStore, row_to_job


class _Cursor:
    def __init__(self, cur: Any, lastrowid: int | None) -> None:
        self._cur = cur
        self.rowcount = cur.rowcount
        self.lastrowid = lastrowid

    def fetchone(self) -> Any:
        return self._cur.fetchone()

    def fetchall(self) -> list[Any]:
        return list(self._cur.fetchall())


class _Conn:
    """A psycopg connection inside a transaction, called as the gate calls a sqlite3 one."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> _Cursor:
        sql = sql.replace("?", "%s")
        returning = sql.lstrip().upper().startswith("INSERT INTO AUTOAPPROVE_SCOPES") or \
            sql.lstrip().upper().startswith("INSERT INTO AUDIT")
        cur = self._conn.execute(sql + (" RETURNING id" if returning else ""), params)
        lastrowid = int(cur.fetchone()["id"]) if returning else None
        return _Cursor(cur, lastrowid)


class PgGateStore(GateStore):
    def __init__(self, db: Database) -> None:  # no SQLite file: the parent's __init__ is not called
        self.db = db
        self.path = db.name  # type: ignore[assignment]  # shown in messages only

    def close(self) -> None:
        pass

    @contextmanager
    def tx(self) -> Iterator[Any]:
        with self.db.tx() as conn:
            yield _Conn(conn)

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        return self.db.query(sql.replace("?", "%s"), params)

    def jobs(self, *, status: str | None = None, limit: int = 50, newest_first: bool = True) -> list[Job]:
        order = "DESC" if newest_first else "ASC"
        if status is None:
            rows = self.query(f"SELECT * FROM jobs ORDER BY created_at {order}, seq {order} LIMIT %s", (limit,))
        else:
            rows = self.query(f"SELECT * FROM jobs WHERE status = %s ORDER BY created_at {order}, seq {order}"
                              " LIMIT %s", (status, limit))
        return [row_to_job(r) for r in rows]


def share_gate(gate: Any, db: Database) -> None:
    """Point a `Gate` (and its audit log and auto-approve switch) at PostgreSQL."""
    store = PgGateStore(db)
    gate.store.close()
    gate.store = gate.audit.store = gate.autoapprove.store = store
