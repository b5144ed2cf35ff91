"""PostgreSQL for the server: one connection per thread, a clear error when it is down, migrations at start.

`Database(url)` opens connections with psycopg 3 (the `[postgres]` extra). A call that cannot
reach the server raises `StoreUnavailable` (a DuckflowError: the API answers 503 with one line
and the next step) and the next call connects again, so the server recovers without a restart.
`migrate()` creates and upgrades the schema under an advisory lock (several processes start at
once) and records each step in `schema_version`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from duckflow.errors import DuckflowError

T = TypeVar("T")
MIGRATION_LOCK = 727_001  # pg_advisory_xact_lock key: one process migrates at a time

MIGRATIONS: list[tuple[int, str]] = [
    (1, """
CREATE TABLE companion_sessions (
    session_id TEXT PRIMARY KEY, workspace TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL, step TEXT NOT NULL, status TEXT NOT NULL, goal TEXT NOT NULL,
    state_json TEXT NOT NULL, extra_json TEXT NOT NULL DEFAULT '{}',
    pending_job TEXT
);
CREATE INDEX companion_sessions_ws ON companion_sessions(workspace, updated_at);
CREATE INDEX companion_sessions_pending ON companion_sessions(pending_job) WHERE pending_job IS NOT NULL;
CREATE TABLE workspace_memory (workspace TEXT PRIMARY KEY, updated_at DOUBLE PRECISION NOT NULL,
                               memory_json TEXT NOT NULL);
CREATE TABLE jobs (
    job_id TEXT PRIMARY KEY, created_at DOUBLE PRECISION NOT NULL, status TEXT NOT NULL, risk TEXT NOT NULL,
    summary TEXT NOT NULL, requested_by TEXT NOT NULL, request TEXT NOT NULL,
    decided_at DOUBLE PRECISION, decided_by TEXT, note TEXT, seq BIGSERIAL
);
CREATE INDEX jobs_by_status ON jobs(status, created_at);
CREATE TABLE audit (id BIGSERIAL PRIMARY KEY, at DOUBLE PRECISION NOT NULL, event TEXT NOT NULL,
                    job_id TEXT, by TEXT NOT NULL, data TEXT NOT NULL);
CREATE TABLE autoapprove_scopes (
    id BIGSERIAL PRIMARY KEY, created_at DOUBLE PRECISION NOT NULL, created_by TEXT NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL, disabled_at DOUBLE PRECISION, disabled_by TEXT, scope TEXT NOT NULL
);
CREATE TABLE identities (identity TEXT PRIMARY KEY, session_id TEXT NOT NULL, channel TEXT NOT NULL,
                         created DOUBLE PRECISION NOT NULL);
CREATE TABLE chunks (session_id TEXT NOT NULL, seq BIGINT NOT NULL, body TEXT NOT NULL,
                     PRIMARY KEY (session_id, seq));
CREATE TABLE events (id BIGSERIAL PRIMARY KEY, at DOUBLE PRECISION NOT NULL, session_id TEXT NOT NULL,
                     type TEXT NOT NULL, body TEXT NOT NULL);
CREATE TABLE deployment (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""),
    (2, """
CREATE TABLE session_flags (
    channel TEXT NOT NULL, session_id TEXT NOT NULL, local_only BOOLEAN NOT NULL DEFAULT false,
    prev_route TEXT NOT NULL DEFAULT 'CHAT', updated_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (channel, session_id));
CREATE TABLE coder_jobs (
    job_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, channel TEXT NOT NULL, route TEXT NOT NULL,
    workspace TEXT NOT NULL, proposal TEXT NOT NULL, status TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL,
    result TEXT);
CREATE INDEX events_by_session ON events(session_id, id);
"""),
    (3, """
CREATE TABLE seen_events (event_id TEXT PRIMARY KEY, seen DOUBLE PRECISION NOT NULL);
CREATE INDEX seen_events_by_age ON seen_events(seen);
"""),
    (4, """
ALTER TABLE session_flags ADD COLUMN coding TEXT NOT NULL DEFAULT '';
"""),
]


class StoreUnavailable(DuckflowError):
    """Redis or PostgreSQL cannot be reached right now (the API answers 503)."""


def unavailable(what: str, exc: BaseException) -> StoreUnavailable:
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return StoreUnavailable(f"{what} is unreachable ({reason})",
                            hint="retry in a moment: the server reconnects by itself; check that it runs")


def redact(url: str) -> str:
    """The URL without its password (for messages and logs)."""
    head, at, tail = url.rpartition("@")
    if not at or ":" not in head.split("//", 1)[-1]:
        return url
    scheme, _, cred = head.partition("//")
    return f"{scheme}//{cred.split(':', 1)[0]}:***@{tail}"


class Database:
    """Connections to one PostgreSQL database, one per thread, re-opened after a failure."""

    def __init__(self, url: str, *, connect_timeout: float = 3.0) -> None:
        try:
            import psycopg  # noqa: F401
        except ImportError:
            raise DuckflowError("--database needs psycopg 3 (the [postgres] extra)",
                                hint="pip install 'duckflow-agent[postgres]'") from None
        self.url = url
        self.name = f"PostgreSQL at {redact(url)}"
        self.connect_timeout = connect_timeout
        self._local = threading.local()
        self._all: list[Any] = []
        self._lock = threading.Lock()

    def _conn(self) -> Any:
        import psycopg
        from psycopg.rows import dict_row

        conn = getattr(self._local, "conn", None)
        if conn is not None and not conn.closed and not conn.broken:
            return conn
        conn = psycopg.connect(self.url, autocommit=True, row_factory=dict_row,
                               connect_timeout=max(1, int(self.connect_timeout)))
        self._local.conn = conn
        with self._lock:
            self._all.append(conn)
        return conn

    def run(self, fn: Callable[[Any], T]) -> T:
        """`fn(connection)`; a connection the server dropped (it restarted) is opened again once at
        once; a server that cannot be reached raises StoreUnavailable."""
        import psycopg

        for attempt in (1, 2):
            reused = getattr(self._local, "conn", None) is not None
            try:
                return fn(self._conn())
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                conn = getattr(self._local, "conn", None)
                if conn is not None:
                    conn.close()
                self._local.conn = None
                if attempt == 2 or not reused:
                    raise unavailable(self.name, exc) from None
        raise AssertionError("unreachable")  # pragma: no cover

    @contextmanager
    def tx(self) -> Iterator[Any]:
        """A transaction on this thread's connection (checked first: a dropped one is opened again)."""
        import psycopg

        try:
            self.run(lambda c: c.execute("SELECT 1"))
            conn = self._conn()
            with conn.transaction():
                yield conn
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            self._local.conn = None
            raise unavailable(self.name, exc) from None

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        return self.run(lambda c: list(c.execute(sql, params).fetchall()))

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> int:
        return self.run(lambda c: int(c.execute(sql, params).rowcount))

    def migrate(self) -> int:
        """Create or upgrade the schema; returns the version now in place."""
        def step(conn: Any) -> int:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
                conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL, "
                             "applied_at TIMESTAMPTZ NOT NULL DEFAULT now())")
                row = conn.execute("SELECT max(version) AS v FROM schema_version").fetchone()
                have = int(row["v"] or 0)
                for version, sql in MIGRATIONS:
                    if version > have:
                        conn.execute(sql)
                        conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (version,))
                        have = version
                return have
        return self.run(step)

    def close(self) -> None:
        with self._lock:
            conns, self._all = self._all, []
        for conn in conns:
            conn.close()
