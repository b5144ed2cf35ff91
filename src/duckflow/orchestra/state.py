"""Per-session orchestration state in SQLite: local_only, the previous route, the coding task, and Coder jobs.

One row per (channel, session_id) — "one person, one session, one state" (seed 003 §9) — so
`/local` in one LINE chat never leaks into another channel or session. Coder jobs keep the
proposal (plan + patch) until the Worker applies it after approval (§6.2).
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from duckflow.orchestra.router import SessionFlags

_SCHEMA = """
CREATE TABLE IF NOT EXISTS session_flags (
  channel TEXT NOT NULL, session_id TEXT NOT NULL, local_only INTEGER NOT NULL DEFAULT 0,
  prev_route TEXT NOT NULL DEFAULT 'CHAT', updated_at REAL NOT NULL,
  PRIMARY KEY (channel, session_id));
CREATE TABLE IF NOT EXISTS coder_jobs (
  job_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, channel TEXT NOT NULL, route TEXT NOT NULL,
  workspace TEXT NOT NULL, proposal TEXT NOT NULL, status TEXT NOT NULL, created_at REAL NOT NULL,
  result TEXT);
CREATE TABLE IF NOT EXISTS analyses (
  id INTEGER PRIMARY KEY AUTOINCREMENT, channel TEXT NOT NULL, session_id TEXT NOT NULL,
  workspace TEXT NOT NULL, task TEXT NOT NULL, output TEXT NOT NULL, created_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS analyses_by_workspace ON analyses(workspace, id);
"""
ANALYSES_KEPT = 50  # per workspace


def default_state_path() -> Path:
    from duckflow.paths import duckflow_home

    return duckflow_home() / "orchestra.db"


class OrchestraState:
    """Session flags and Coder jobs (a real SQLite file; `:memory:` for tests)."""

    def __init__(self, path: str | Path | None = None) -> None:
        from duckflow.store.sqlite import connect

        self.path = Path(path) if path is not None and str(path) != ":memory:" else path or default_state_path()
        self.conn: sqlite3.Connection = connect(self.path)
        self.conn.executescript(_SCHEMA)
        columns = {r[1] for r in self.conn.execute("PRAGMA table_info(session_flags)")}
        if "coding" not in columns:  # a database of an earlier version: the coding task's column added
            with self.conn:
                self.conn.execute("ALTER TABLE session_flags ADD COLUMN coding TEXT NOT NULL DEFAULT ''")

    def close(self) -> None:
        from duckflow.store.sqlite import release

        release(self.conn)

    def flags(self, channel: str, session_id: str) -> SessionFlags:
        row = self.conn.execute("SELECT local_only, prev_route, coding FROM session_flags WHERE channel=? AND "
                                "session_id=?", (channel, session_id)).fetchone()
        return SessionFlags(bool(row["local_only"]), str(row["prev_route"]), str(row["coding"] or "")) if row \
            else SessionFlags()

    def save_flags(self, channel: str, session_id: str, flags: SessionFlags) -> None:
        with self.conn:
            self.conn.execute(
                "INSERT INTO session_flags(channel, session_id, local_only, prev_route, coding, updated_at) "
                "VALUES (?,?,?,?,?,?) ON CONFLICT(channel, session_id) DO UPDATE SET local_only=excluded.local_only, "
                "prev_route=excluded.prev_route, coding=excluded.coding, updated_at=excluded.updated_at",
                (channel, session_id, int(flags.local_only), flags.prev_route, flags.coding, time.time()))

    def save_job(self, job_id: str, *, session_id: str, channel: str, route: str, workspace: str,
                 proposal: dict[str, Any], status: str = "pending") -> None:
        with self.conn:
            self.conn.execute(
                "INSERT OR REPLACE INTO coder_jobs(job_id, session_id, channel, route, workspace, proposal, status, "
                "created_at) VALUES (?,?,?,?,?,?,?,?)",
                (job_id, session_id, channel, route, workspace, json.dumps(proposal), status, time.time()))

    def job(self, job_id: str) -> dict[str, Any] | None:
        row = self.conn.execute("SELECT * FROM coder_jobs WHERE job_id=?", (job_id,)).fetchone()
        if row is None:
            return None
        data = dict(row)
        data["proposal"] = json.loads(data["proposal"])
        return data

    def set_job_status(self, job_id: str, status: str, result: str | None = None) -> None:
        with self.conn:
            self.conn.execute("UPDATE coder_jobs SET status=?, result=? WHERE job_id=?", (status, result, job_id))

    # -- ANALYZE results, the one store of them (seed 003 §9) -------------------------------
    def save_analysis(self, *, channel: str, session_id: str, workspace: str, task: str,
                      output: dict[str, Any]) -> None:
        """An ANALYZE result as structured data (the Worker's result, why, next actions, questions,
        confidence, risk): later turns and `duckflow status` read it back."""
        with self.conn:
            self.conn.execute(
                "INSERT INTO analyses(channel, session_id, workspace, task, output, created_at) VALUES (?,?,?,?,?,?)",
                (channel, session_id, workspace, task[:2000], json.dumps(output, ensure_ascii=False), time.time()))
            self.conn.execute(
                "DELETE FROM analyses WHERE workspace=? AND id NOT IN "
                "(SELECT id FROM analyses WHERE workspace=? ORDER BY id DESC LIMIT ?)",
                (workspace, workspace, ANALYSES_KEPT))

    def analyses(self, workspace: str, limit: int = 3) -> list[dict[str, Any]]:
        """The workspace's latest ANALYZE results, newest first: {task, at, session_id, **output}."""
        rows = self.conn.execute("SELECT * FROM analyses WHERE workspace=? ORDER BY id DESC LIMIT ?",
                                 (workspace, limit)).fetchall()
        return [{"task": r["task"], "at": r["created_at"], "session_id": r["session_id"],
                 **json.loads(r["output"])} for r in rows]
