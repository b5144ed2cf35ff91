"""The orchestra's per-session flags, Coder jobs and event log in PostgreSQL (shared by every process).

`PgOrchestraState` is an `OrchestraState` (flags: `/local` and the previous route per channel and
session; Coder jobs waiting for approval) whose rows are in PostgreSQL, read fresh each time, so
a flag set through one process holds on the next. `PgEventLog` is an `EventLog` whose records —
masked by the event log's own code, exactly as the JSONL file gets them — are rows of `events`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from duckflow.channels.shared.pg import Database
from duckflow.channels.shared.pgstores import retried
from duckflow.orchestra.events import EventLog
from duckflow.orchestra.router import SessionFlags
from duckflow.orchestra.state import OrchestraState


class PgOrchestraState(OrchestraState):
    def __init__(self, db: Database) -> None:  # no SQLite file: the parent's __init__ is not called
        self.db = db
        self.path = db.name  # shown in messages only

    def close(self) -> None:
        pass

    def flags(self, channel: str, session_id: str) -> SessionFlags:
        rows = self.db.query("SELECT local_only, prev_route, coding FROM session_flags WHERE channel=%s AND "
                             "session_id=%s", (channel, session_id))
        return SessionFlags(bool(rows[0]["local_only"]), str(rows[0]["prev_route"]),
                            str(rows[0]["coding"] or "")) if rows else SessionFlags()

    def save_flags(self, channel: str, session_id: str, flags: SessionFlags) -> None:
        self.db.execute(
            "INSERT INTO session_flags(channel, session_id, local_only, prev_route, coding, updated_at)"
            " VALUES (%s,%s,%s,%s,%s,%s) ON CONFLICT(channel, session_id) DO UPDATE SET local_only=excluded.local_only,"
            " prev_route=excluded.prev_route, coding=excluded.coding, updated_at=excluded.updated_at",
            (channel, session_id, flags.local_only, flags.prev_route, flags.coding, time.time()))

    def save_job(self, job_id: str, *, session_id: str, channel: str, route: str, workspace: str,
                 proposal: dict[str, Any], status: str = "pending") -> None:
        self.db.execute(
            "INSERT INTO coder_jobs(job_id, session_id, channel, route, workspace, proposal, status, created_at)"
            " VALUES (%s,%s,%s,%s,%s,%s,%s,%s) ON CONFLICT(job_id) DO UPDATE SET session_id=excluded.session_id,"
            " channel=excluded.channel, route=excluded.route, workspace=excluded.workspace,"
            " proposal=excluded.proposal, status=excluded.status, created_at=excluded.created_at",
            (job_id, session_id, channel, route, workspace, json.dumps(proposal), status, time.time()))

    def job(self, job_id: str) -> dict[str, Any] | None:
        rows = self.db.query("SELECT * FROM coder_jobs WHERE job_id=%s", (job_id,))
        if not rows:
            return None
        data = dict(rows[0])
        data["proposal"] = json.loads(data["proposal"])
        return data

    def set_job_status(self, job_id: str, status: str, result: str | None = None) -> None:
        self.db.execute("UPDATE coder_jobs SET status=%s, result=%s WHERE job_id=%s", (status, result, job_id))


class PgEventLog(EventLog):
    def __init__(self, db: Database) -> None:
        super().__init__(None)
        self.db = db
        self.path = db.name  # type: ignore[assignment]  # shown in messages only

    def _append(self, line: str, record: dict[str, Any]) -> None:
        retried(self.db, lambda: self.db.execute(
            "INSERT INTO events (at, session_id, type, body) VALUES (%s,%s,%s,%s)",
            (time.time(), str(record.get("session_id") or ""), str(record.get("type") or ""), line)), "events")

    def files(self) -> list[Any]:
        return []

    def read(self, *, session: str | None = None, type: str | None = None) -> Iterator[dict[str, Any]]:
        where, args = [], []
        if session is not None:
            where.append("session_id=%s")
            args.append(session)
        if type is not None:
            if type.endswith("*"):
                where.append("type LIKE %s")
                args.append(type.rstrip("*").replace("%", r"\%").replace("_", r"\_") + "%")
            else:
                where.append("type=%s")
                args.append(type)
        sql = "SELECT body FROM events" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id"
        for row in self.db.query(sql, tuple(args)):
            yield json.loads(row["body"])
