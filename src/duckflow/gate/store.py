"""The gate's SQLite tables: approval jobs with their decisions, audit rows, auto-approve scopes."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from duckflow.gate.errors import AmbiguousJob, UnknownJob
from duckflow.gate.request import ApprovalRequest, Decision, Job, JobStatus

MIN_PREFIX = 4

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    job_id TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    status TEXT NOT NULL,
    risk TEXT NOT NULL,
    summary TEXT NOT NULL,
    requested_by TEXT NOT NULL,
    request TEXT NOT NULL,
    decided_at REAL,
    decided_by TEXT,
    note TEXT
);
CREATE INDEX IF NOT EXISTS jobs_by_status ON jobs(status, created_at);
CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    event TEXT NOT NULL,
    job_id TEXT,
    by TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS autoapprove_scopes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at REAL NOT NULL,
    created_by TEXT NOT NULL,
    expires_at REAL NOT NULL,
    disabled_at REAL,
    disabled_by TEXT,
    scope TEXT NOT NULL
);
"""


class GateStore:
    """One connection (WAL, via duckflow.store.sqlite.connect) shared by the gate's parts.

    Every read goes to the database: a decision or an off switch made by another process
    is seen by the next call.
    """

    def __init__(self, path: str | Path) -> None:
        from duckflow.store.sqlite import connect

        self.path = Path(path)
        self.conn = connect(path)
        self.conn.isolation_level = None  # explicit transactions only
        self._lock = threading.RLock()
        with self._lock:
            self.conn.executescript(_SCHEMA)

    def close(self) -> None:
        from duckflow.store.sqlite import release

        release(self.conn)

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (BEGIN IMMEDIATE), serialized across threads and processes."""
        with self._lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return list(self.conn.execute(sql, params).fetchall())

    # -- jobs -----------------------------------------------------------------------------

    @staticmethod
    def insert_job(c: sqlite3.Connection, request: ApprovalRequest, status: JobStatus) -> None:
        c.execute(
            "INSERT INTO jobs (job_id, created_at, status, risk, summary, requested_by, request)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (request.job_id, request.created_at, status, request.risk, request.summary,
             request.requested_by, json.dumps(request.to_dict(), ensure_ascii=False)),
        )

    @staticmethod
    def set_decision(c: sqlite3.Connection, decision: Decision, *, only_pending: bool = True) -> bool:
        """Record a decision; with `only_pending`, False when the job was no longer pending."""
        sql = "UPDATE jobs SET status = ?, decided_at = ?, decided_by = ?, note = ? WHERE job_id = ?"
        if only_pending:
            sql += " AND status = 'pending'"
        cur = c.execute(sql, (decision.status, decision.at, decision.by, decision.note, decision.job_id))
        return cur.rowcount == 1

    def resolve(self, job_id: str) -> str:
        """The full id of a job from its id or a unique prefix (at least 4 characters)."""
        key = job_id.strip().lower()
        rows = self.query("SELECT job_id FROM jobs WHERE job_id = ?", (key,))
        if rows:
            return str(rows[0]["job_id"])
        if len(key) < MIN_PREFIX or not key.isalnum():
            raise UnknownJob(job_id)
        rows = self.query("SELECT job_id FROM jobs WHERE job_id LIKE ? ORDER BY created_at DESC LIMIT 6",
                          (key + "%",))
        if not rows:
            raise UnknownJob(job_id)
        if len(rows) > 1:
            raise AmbiguousJob(job_id, [str(r["job_id"]) for r in rows])
        return str(rows[0]["job_id"])

    def get_job(self, job_id: str) -> Job:
        rows = self.query("SELECT * FROM jobs WHERE job_id = ?", (job_id,))
        if not rows:
            raise UnknownJob(job_id)
        return row_to_job(rows[0])

    def jobs(self, *, status: str | None = None, limit: int = 50, newest_first: bool = True) -> list[Job]:
        order = "DESC" if newest_first else "ASC"
        if status is None:
            rows = self.query(f"SELECT * FROM jobs ORDER BY created_at {order}, rowid {order} LIMIT ?",
                              (limit,))
        else:
            rows = self.query(
                f"SELECT * FROM jobs WHERE status = ? ORDER BY created_at {order}, rowid {order} LIMIT ?",
                (status, limit))
        return [row_to_job(r) for r in rows]

    # -- audit ----------------------------------------------------------------------------

    @staticmethod
    def insert_audit(c: sqlite3.Connection, at: float, event: str, job_id: str | None, by: str,
                     data: dict[str, Any]) -> None:
        c.execute("INSERT INTO audit (at, event, job_id, by, data) VALUES (?, ?, ?, ?, ?)",
                  (at, event, job_id, by, json.dumps(data, ensure_ascii=False)))

    def audit_rows(self, *, job_id: str | None = None, limit: int = 1000) -> list[dict[str, Any]]:
        if job_id is None:
            rows = self.query("SELECT * FROM audit ORDER BY id LIMIT ?", (limit,))
        else:
            rows = self.query("SELECT * FROM audit WHERE job_id = ? ORDER BY id LIMIT ?", (job_id, limit))
        return [{"id": r["id"], "at": r["at"], "event": r["event"], "job_id": r["job_id"],
                 "by": r["by"], "data": json.loads(r["data"])} for r in rows]


def row_to_job(row: sqlite3.Row) -> Job:
    request = ApprovalRequest.from_dict(json.loads(row["request"]))
    status: JobStatus = row["status"]
    decision = None
    if row["decided_at"] is not None:
        decision = Decision(job_id=row["job_id"], status=status, by=row["decided_by"] or "",
                            at=float(row["decided_at"]), note=row["note"])
    return Job(request=request, status=status, decision=decision)
