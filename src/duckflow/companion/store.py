"""Persists companion sessions in SQLite (`duckflow_home()/sessions.db`), one row per session.

The whole AgentState is written as one JSON document in one transaction after every change (a
turn's changes at its flush points: owner.py), so a crash leaves either the previous state or
the new one; the transition history and the plans go into the same row. `load()` restores a session (pending approval included).

Long-term memory (seed 001 §3.1 / M25) belongs to the workspace, not to one session: the same
transaction writes the session's LongTermMemory (stats, learned patterns, settings, one line
per past session) to `workspace_memory`, and a session opened later in that workspace — new or
resumed — starts from it. `duckflow memory` lists it and forgets items.
"""

from __future__ import annotations

import builtins
import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from duckflow.companion.state import AgentState
from duckflow.paths import duckflow_home
from duckflow.store.sqlite import connect, release

_SCHEMA = """
CREATE TABLE IF NOT EXISTS companion_sessions (
    session_id   TEXT PRIMARY KEY,
    workspace    TEXT NOT NULL,
    created_at   REAL NOT NULL,
    updated_at   REAL NOT NULL,
    step         TEXT NOT NULL,
    status       TEXT NOT NULL,
    goal         TEXT NOT NULL,
    state_json   TEXT NOT NULL,
    extra_json   TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS companion_sessions_ws ON companion_sessions(workspace, updated_at);
CREATE TABLE IF NOT EXISTS workspace_memory (
    workspace    TEXT PRIMARY KEY,
    updated_at   REAL NOT NULL,
    memory_json  TEXT NOT NULL
);
"""


def default_db_path() -> Path:
    return duckflow_home() / "sessions.db"


@dataclass(frozen=True)
class SessionSummary:
    """One line of `duckflow sessions`."""

    session_id: str
    workspace: str
    updated_at: float
    step: str
    status: str
    goal: str
    pending: bool
    task: str = ""  # the request the session works on (the person's words)
    created_at: float = 0.0
    cancelled: bool = False  # its last turn was cancelled by the person (Stop, Ctrl-C), the state kept


def was_cancelled(state: dict[str, Any]) -> bool:
    """The saved state's last change says its turn was cancelled (live.note_cancelled)."""
    return str(state.get("last_delta") or "").startswith("task cancelled")


@dataclass(frozen=True)
class SaveRows:
    """One `SessionStore.save`, serialised: the workspace memory row (None when unchanged) and
    the session row."""

    memory: tuple[Any, ...] | None
    session: tuple[Any, ...]


class SessionStore:
    """Saves and restores AgentState (plus an `extra` dict: transition history, plans)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_db_path()
        self._conn: sqlite3.Connection = connect(self.path)
        self._conn.executescript(_SCHEMA)
        self._lock = threading.Lock()
        self._last_extra: dict[str, Any] | None = None
        self._last_extra_doc = "{}"
        self._last_memory: tuple[str, str] | None = None  # (workspace, document) written last

    def save(self, state: AgentState, extra: dict[str, Any] | None = None) -> None:
        rows = self.rows(state, extra)
        with self._lock, self._conn:
            self.write_rows(self._conn, rows)

    def rows(self, state: AgentState, extra: dict[str, Any] | None = None) -> SaveRows:
        """What `save` writes, serialised now (a snapshot of `state`); `write_rows` writes it."""
        data = state.to_dict()
        doc = _json(data)
        if extra is not None and extra is self._last_extra:
            extra_doc = self._last_extra_doc
        else:
            extra_doc = _json(extra or {}, fallback=str)
            self._last_extra, self._last_extra_doc = extra, extra_doc
        memory_doc = _json(data["memory"])  # state.memory.to_dict(), made once above
        memory: tuple[Any, ...] | None = None
        if state.workspace and self._last_memory != (state.workspace, memory_doc):
            memory = (state.workspace, state.last_updated, memory_doc)
            self._last_memory = (state.workspace, memory_doc)
        session = (state.session_id, state.workspace, state.created_at, state.last_updated,
                   state.step.value, state.status.value, state.goal, doc, extra_doc)
        return SaveRows(memory, session)

    @staticmethod
    def write_rows(conn: sqlite3.Connection, rows: SaveRows) -> None:
        """Write one `rows()` result on `conn` (inside the caller's transaction)."""
        if rows.memory is not None:
            conn.execute(
                "INSERT INTO workspace_memory(workspace, updated_at, memory_json) VALUES (?,?,?)"
                " ON CONFLICT(workspace) DO UPDATE SET updated_at=excluded.updated_at,"
                " memory_json=excluded.memory_json",
                rows.memory,
            )
        conn.execute(
            "INSERT INTO companion_sessions(session_id, workspace, created_at, updated_at, step,"
            " status, goal, state_json, extra_json) VALUES (?,?,?,?,?,?,?,?,?)"
            " ON CONFLICT(session_id) DO UPDATE SET workspace=excluded.workspace,"
            " updated_at=excluded.updated_at, step=excluded.step, status=excluded.status,"
            " goal=excluded.goal, state_json=excluded.state_json, extra_json=excluded.extra_json",
            rows.session,
        )

    def load(self, session_id: str) -> tuple[AgentState, dict[str, Any]] | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT state_json, extra_json FROM companion_sessions WHERE session_id=?",
                (session_id,),
            ).fetchone()
        if row is None:
            return None
        return AgentState.from_dict(json.loads(row["state_json"])), json.loads(row["extra_json"])

    def latest(self, workspace: str | None = None) -> str | None:
        """The most recently updated session id (of one workspace when given)."""
        sql = "SELECT session_id FROM companion_sessions"
        args: tuple[Any, ...] = ()
        if workspace is not None:
            sql += " WHERE workspace=?"
            args = (workspace,)
        with self._lock:
            row = self._conn.execute(sql + " ORDER BY updated_at DESC LIMIT 1", args).fetchone()
        return None if row is None else str(row["session_id"])

    def list(self, limit: int = 50, workspace: str | None = None) -> list[SessionSummary]:
        """The newest sessions first; only `workspace`'s when given (as stored: the resolved path)."""
        where, args = ("WHERE workspace=? ", (workspace, limit)) if workspace is not None else ("", (limit,))
        with self._lock:
            rows = self._conn.execute(
                "SELECT session_id, workspace, updated_at, step, status, goal, state_json"
                f" FROM companion_sessions {where}ORDER BY updated_at DESC LIMIT ?",
                args,
            ).fetchall()
        out = []
        for r in rows:
            state = json.loads(r["state_json"])
            out.append(
                SessionSummary(
                    r["session_id"], r["workspace"], r["updated_at"], r["step"], r["status"],
                    r["goal"], bool(state.get("pending_gate")), str(state.get("task") or ""),
                    float(state.get("created_at") or 0.0), was_cancelled(state),
                )
            )
        return out

    # -- the workspace's long-term memory ------------------------------------------------
    def load_memory(self, workspace: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._conn.execute("SELECT memory_json FROM workspace_memory WHERE workspace=?",
                                     (workspace,)).fetchone()
        return None if row is None else dict(json.loads(row["memory_json"]))

    def save_memory(self, workspace: str, memory: dict[str, Any]) -> None:
        doc = json.dumps(memory, ensure_ascii=False)
        with self._lock, self._conn:
            self._conn.execute(
                "INSERT INTO workspace_memory(workspace, updated_at, memory_json) VALUES (?,?,?)"
                " ON CONFLICT(workspace) DO UPDATE SET updated_at=excluded.updated_at,"
                " memory_json=excluded.memory_json", (workspace, time.time(), doc))
            self._last_memory = None

    def memories(self) -> builtins.list[tuple[str, float, dict[str, Any]]]:
        """(workspace, updated_at, memory) for every workspace with memory, newest first."""
        with self._lock:
            rows = self._conn.execute("SELECT workspace, updated_at, memory_json FROM workspace_memory"
                                      " ORDER BY updated_at DESC").fetchall()
        return [(r["workspace"], r["updated_at"], json.loads(r["memory_json"])) for r in rows]

    def delete(self, session_id: str) -> bool:
        with self._lock, self._conn:
            cur = self._conn.execute("DELETE FROM companion_sessions WHERE session_id=?", (session_id,))
        return cur.rowcount > 0

    def close(self) -> None:
        release(self._conn)


def _json(value: Any, fallback: Any = None) -> str:
    """`value` as a JSON document (UTF-8 characters as they are, like `json.dumps(...,
    ensure_ascii=False)`), written by pydantic-core's serializer: it runs after every turn's
    changes, and the standard library's encoder took ~4x as long on a session's state."""
    from pydantic_core import to_json

    return to_json(value, fallback=fallback).decode("utf-8")


def new_session_id() -> str:
    import secrets

    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)
