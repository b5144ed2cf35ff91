"""Sessions, identities and the kept chunk log in PostgreSQL, behind the SQLite stores' interfaces.

`PgSessionStore` is a `SessionStore` (the companion's states, the workspace's long-term memory):
a save is serialised at once and written behind by one thread, in order (the same rows as
SQLite, plus the id of the job a session waits on, so any process finds the session an approval
belongs to); while PostgreSQL is down the writer keeps the rows and tries again. Reads see every
save made before them. `PgIdentityMap` maps channel identities to sessions. `PgChunkArchive`
keeps the last `ring` chunks of each session for a resume older than Redis keeps. `PgSeenEvents`
remembers the webhook events taken by any process, so a redelivery to another one is dropped.
"""

from __future__ import annotations

import builtins
import json
import logging
import time
from typing import Any

from duckflow.channels.behind import WriteBehind, _keep_memory
from duckflow.channels.shared.pg import Database, StoreUnavailable
from duckflow.companion.state import AgentState
from duckflow.companion.store import SaveRows, SessionStore, SessionSummary, was_cancelled

log = logging.getLogger("duckflow.channels")
RETRY_S = 0.5
RETRY_FOR_S = 120.0  # how long a writer keeps rows while PostgreSQL is down (then it logs them lost)
FLUSH_WAIT_S = 5.0  # a read waits this long for the writes before it; longer: PostgreSQL is down (503)


def flushed(db: Database, behind: WriteBehind) -> None:
    """Wait for the writes put so far; while PostgreSQL is down they wait, and so would every
    request on the event loop: after FLUSH_WAIT_S the request is answered 503 instead."""
    from concurrent.futures import TimeoutError as Late

    try:
        behind.flush(FLUSH_WAIT_S)
    except Late:
        raise StoreUnavailable(f"{db.name} is unreachable (writes are waiting for it)",
                               hint="retry in a moment: the server reconnects by itself; check that it runs") from None


def retried(db: Database, write: Any, what: str) -> None:
    """`write()` until it succeeds or RETRY_FOR_S passed (writer threads only)."""
    deadline = time.monotonic() + RETRY_FOR_S
    while True:
        try:
            write()
            return
        except StoreUnavailable as exc:
            if time.monotonic() > deadline:
                log.error("could not write %s to %s: %s", what, db.name, exc.message)
                raise
            time.sleep(RETRY_S)


_UPSERT_MEMORY = ("INSERT INTO workspace_memory(workspace, updated_at, memory_json) VALUES (%s,%s,%s)"
                  " ON CONFLICT(workspace) DO UPDATE SET updated_at=excluded.updated_at,"
                  " memory_json=excluded.memory_json")
_UPSERT_SESSION = (
    "INSERT INTO companion_sessions(session_id, workspace, created_at, updated_at, step, status, goal,"
    " state_json, extra_json, pending_job) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)"
    " ON CONFLICT(session_id) DO UPDATE SET workspace=excluded.workspace, updated_at=excluded.updated_at,"
    " step=excluded.step, status=excluded.status, goal=excluded.goal, state_json=excluded.state_json,"
    " extra_json=excluded.extra_json, pending_job=excluded.pending_job")


class PgSessionStore(SessionStore):
    """The companion's session store on PostgreSQL (written behind, read after a flush)."""

    def __init__(self, db: Database) -> None:  # no SQLite file: the parent's __init__ is not called
        self.db = db
        self.path = db.name  # type: ignore[assignment]  # shown in messages only
        self._last_extra: dict[str, Any] | None = None
        self._last_extra_doc = "{}"
        self._last_memory: tuple[str, str] | None = None
        self._behind = WriteBehind("duckflow-pg-sessions", self._write_items)

    def save(self, state: AgentState, extra: dict[str, Any] | None = None) -> None:
        rows = self.rows(state, extra)
        job = (state.pending_job or {}).get("job_id") if state.pending_gate else None
        self._behind.put(state.session_id, (rows, str(job) if job else None), _keep_pending)

    def _write_items(self, items: list[tuple[Any, Any]]) -> None:
        def write() -> None:
            with self.db.tx() as conn:
                for _, (rows, job) in items:
                    if rows.memory is not None:
                        conn.execute(_UPSERT_MEMORY, rows.memory)
                    conn.execute(_UPSERT_SESSION, (*rows.session, job))
        retried(self.db, write, "session states")

    def flush(self) -> None:
        flushed(self.db, self._behind)

    def load(self, session_id: str) -> tuple[AgentState, dict[str, Any]] | None:
        self.flush()
        rows = self.db.query("SELECT state_json, extra_json FROM companion_sessions WHERE session_id=%s",
                             (session_id,))
        if not rows:
            return None
        return AgentState.from_dict(json.loads(rows[0]["state_json"])), json.loads(rows[0]["extra_json"])

    def latest(self, workspace: str | None = None) -> str | None:
        self.flush()
        where, args = ("WHERE workspace=%s ", (workspace,)) if workspace is not None else ("", ())
        rows = self.db.query(f"SELECT session_id FROM companion_sessions {where}ORDER BY updated_at DESC LIMIT 1",
                             args)
        return str(rows[0]["session_id"]) if rows else None

    def list(self, limit: int = 50, workspace: str | None = None) -> builtins.list[SessionSummary]:
        self.flush()
        where, args = ("WHERE workspace=%s ", (workspace, limit)) if workspace is not None else ("", (limit,))
        rows = self.db.query("SELECT session_id, workspace, updated_at, step, status, goal, pending_job, state_json"
                             f" FROM companion_sessions {where}ORDER BY updated_at DESC LIMIT %s", args)
        out = []
        for r in rows:
            state = json.loads(r["state_json"] or "{}")
            out.append(SessionSummary(r["session_id"], r["workspace"], r["updated_at"], r["step"], r["status"],
                                      r["goal"], r["pending_job"] is not None, str(state.get("task") or ""),
                                      float(state.get("created_at") or 0.0), was_cancelled(state)))
        return out

    def waiting_on(self, job_id: str) -> str | None:
        """The session whose pending approval is this job, whichever process ran it."""
        self.flush()
        rows = self.db.query("SELECT session_id FROM companion_sessions WHERE pending_job=%s LIMIT 1", (job_id,))
        return str(rows[0]["session_id"]) if rows else None

    def load_memory(self, workspace: str) -> dict[str, Any] | None:
        self.flush()
        rows = self.db.query("SELECT memory_json FROM workspace_memory WHERE workspace=%s", (workspace,))
        return dict(json.loads(rows[0]["memory_json"])) if rows else None

    def save_memory(self, workspace: str, memory: dict[str, Any]) -> None:
        self.flush()
        self.db.execute(_UPSERT_MEMORY, (workspace, time.time(), json.dumps(memory, ensure_ascii=False)))
        self._last_memory = None

    def memories(self) -> builtins.list[tuple[str, float, dict[str, Any]]]:
        self.flush()
        rows = self.db.query("SELECT workspace, updated_at, memory_json FROM workspace_memory"
                             " ORDER BY updated_at DESC")
        return [(r["workspace"], r["updated_at"], json.loads(r["memory_json"])) for r in rows]

    def delete(self, session_id: str) -> bool:
        self.flush()
        return self.db.execute("DELETE FROM companion_sessions WHERE session_id=%s", (session_id,)) > 0

    def close(self) -> None:
        self._behind.close()


def _keep_pending(old: tuple[SaveRows, str | None], new: tuple[SaveRows, str | None]) -> tuple[SaveRows, str | None]:
    return _keep_memory(old[0], new[0]), new[1]


class PgIdentityMap:
    """Channel identity (e.g. `slack:C1:1700.1`) → session id, shared by every process."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def get(self, identity: str) -> str | None:
        rows = self.db.query("SELECT session_id FROM identities WHERE identity=%s", (identity,))
        return str(rows[0]["session_id"]) if rows else None

    def put(self, identity: str, session_id: str, channel: str) -> None:
        self.db.execute("INSERT INTO identities VALUES (%s,%s,%s,%s) ON CONFLICT(identity) DO UPDATE SET"
                        " session_id=excluded.session_id, channel=excluded.channel, created=excluded.created",
                        (identity, session_id, channel, time.time()))

    def all(self) -> list[dict[str, Any]]:
        rows = self.db.query("SELECT identity, session_id, channel, created FROM identities ORDER BY created DESC")
        return [dict(r) for r in rows]

    def close(self) -> None:
        pass


class PgChunkArchive:
    """The last `ring` chunks per session (written behind in batches; read for an old resume)."""

    def __init__(self, db: Database, ring: int) -> None:
        self.db = db
        self.ring = ring
        self._pruned: dict[str, int] = {}  # writer thread only
        self._behind = WriteBehind("duckflow-pg-chunks", self._write_items)

    def add(self, session_id: str, seq: int, body: str) -> None:
        self._behind.put((session_id, seq), body)

    def _write_items(self, items: list[tuple[Any, Any]]) -> None:
        newest: dict[str, int] = {}
        for (sid, seq), _ in items:
            newest[sid] = max(seq, newest.get(sid, 0))

        def write() -> None:
            with self.db.tx() as conn:
                with conn.cursor() as cur:
                    cur.executemany("INSERT INTO chunks VALUES (%s,%s,%s) ON CONFLICT DO NOTHING",
                                    [(sid, seq, body) for (sid, seq), body in items])
                for sid, seq in newest.items():
                    cut = seq - self.ring
                    if cut > 0 and cut - self._pruned.get(sid, 0) >= max(1, self.ring // 4):
                        conn.execute("DELETE FROM chunks WHERE session_id=%s AND seq<=%s", (sid, cut))
                        self._pruned[sid] = cut
        retried(self.db, write, "chunks")

    def since(self, session_id: str, after: int, upto: int) -> list[tuple[int, str]]:
        flushed(self.db, self._behind)
        rows = self.db.query("SELECT seq, body FROM chunks WHERE session_id=%s AND seq>%s AND seq<=%s ORDER BY seq",
                             (session_id, after, upto))
        return [(int(r["seq"]), str(r["body"])) for r in rows]

    def oldest(self, session_id: str) -> int:
        flushed(self.db, self._behind)
        rows = self.db.query("SELECT min(seq) AS s FROM chunks WHERE session_id=%s", (session_id,))
        return int(rows[0]["s"] or 0)

    def close(self) -> None:
        self._behind.close()


class PgSeenEvents:
    """`SeenEvents` (channels/seen.py) in PostgreSQL: an event id is taken by one process of all."""

    def __init__(self, db: Database, *, keep_s: float = 24 * 3600) -> None:
        self.db, self.keep_s = db, keep_s
        self._pruned = 0.0

    def first(self, event_id: str, now: float | None = None) -> bool:
        """True (and remembered) when no process saw `event_id`; False for a repeat."""
        at = time.time() if now is None else now
        if at - self._pruned > 600:  # drop what is past keeping, at most every ten minutes
            self.db.execute("DELETE FROM seen_events WHERE seen < %s", (at - self.keep_s,))
            self._pruned = at
        return self.db.execute("INSERT INTO seen_events VALUES (%s, %s) ON CONFLICT DO NOTHING",
                               (event_id, at)) == 1

    def close(self) -> None:
        pass  # the connections are the Database's
