"""`SessionRunner` for several processes: sessions and the gate in PostgreSQL, no stale copy in memory.

The companion's sessions are kept in `PgSessionStore` and the gate's jobs in `PgGateStore`. A
process opens a session afresh from PostgreSQL when it takes the session's lease (`take`) and
another process may have run turns meanwhile (the lease's give-back count differs from the one
it kept the session at); it saves everything before it gives the lease back (`flush`). A read of a session this process does not hold is made from PostgreSQL too.
The job an approval answers is found through the database (`waiting_on`), whichever process
asked it. TokenGuard's totals go to Redis (unless `[token_guard] backend = "memory"`), so a
session's budget counts every process's turns.
"""

from __future__ import annotations

from typing import Any

from duckflow.channels.runner import SessionRunner
from duckflow.channels.shared.pg import Database


class SharedRunner(SessionRunner):
    def __init__(self, *args: Any, db: Database, redis_url: str | None = None, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.db = db
        self.redis_url = redis_url
        self.held: set[str] = set()
        self._versions: dict[str, int] = {}  # sessions kept open after their lease, by version
        self._homes: dict[str, str] = {}  # session -> its workspace, once seen

    def _shared_parts(self) -> dict[str, Any]:
        if self._shared is None:
            from duckflow.channels.shared.pggate import share_gate
            from duckflow.channels.shared.pgstores import PgSessionStore

            parts = super()._shared_parts()
            parts["store"].close()  # the SQLite one the parent made
            parts["store"] = PgSessionStore(self.db)
            share_gate(parts["gate"], self.db)
            guard = parts["token_guard"]
            if self.redis_url and parts["config"].token_guard.backend == "sqlite":  # totals across processes
                from duckflow.core.token_guard import RedisCounter

                guard.counter.close()
                guard.counter = RedisCounter(self.redis_url)
        return super()._shared_parts()

    def new_session(self) -> str:
        session = self._session(None)
        sid = str(session.state.session_id)
        if self.store.load(sid) is None:  # known to every process from now on
            self.store.save(session.state, session.owner.extra())
            self.store.flush()
        return sid

    def forget(self, sid: str) -> None:
        self._open.pop(sid, None)
        for key in [k for k in self._orchs if k[1] == sid]:
            self._orchs.pop(key).close()

    def take(self, sid: str, version: int) -> None:
        """This process runs the session's turns from now on: read it afresh, unless the copy
        here is from the same `version` (no turn ran elsewhere since this process gave it back)."""
        if self._versions.pop(sid, None) != version:
            self.forget(sid)
        self.held.add(sid)

    def give_back(self, sid: str, version: int | None) -> None:
        """The lease is given back (as `version`; None: lost): keep the copy only with a version."""
        self.held.discard(sid)
        if version is None or sid not in self._open:
            self.forget(sid)
            return
        self._versions[sid] = version
        while len(self._versions) > self.max_open:
            self._versions.pop(next(iter(self._versions)))

    def session(self, session_id: str) -> Any:
        """For a read (the API): the saved state, unless this process runs the session now."""
        if session_id not in self.held:
            self._versions.pop(session_id, None)
            self.forget(session_id)
        return super().session(session_id)

    def exists(self, session_id: str) -> bool:
        """Asked of PostgreSQL every time (one light query): while it is down a request is answered
        503 before anything is queued."""
        self.store.flush()
        rows = self.db.query("SELECT workspace FROM companion_sessions WHERE session_id=%s", (session_id,))
        if not rows:
            return False
        self._homes[session_id] = str(rows[0]["workspace"])
        while len(self._homes) > 100_000:
            self._homes.pop(next(iter(self._homes)))
        return True

    def workspace_of(self, session_id: str) -> str | None:
        """The workspace a saved session belongs to (None when unknown); remembered from `exists`
        (a session keeps its workspace, and the server deletes none)."""
        if session_id not in self._homes and not self.exists(session_id):
            return None
        return self._homes.get(session_id)

    def _route_parts(self) -> None:
        if self._router is None:  # flags, Coder jobs and the event log in PostgreSQL, not this process's SQLite
            from duckflow.channels.eventqueue import BackgroundEvents
            from duckflow.channels.shared.pgorchestra import PgEventLog, PgOrchestraState

            super()._route_parts()
            self._ostate.close()
            self._events.close()
            self._ostate = PgOrchestraState(self.db)
            self._events = BackgroundEvents(PgEventLog(self.db))

    def _coder_job(self, job_id: str) -> tuple[str, str] | None:
        """A Coder job waiting for approval, asked on any process: (channel, session)."""
        self._route_parts()
        job = self._ostate.job(job_id)
        if job is None or job.get("status") != "pending":
            return None
        return str(job["channel"]), str(job["session_id"])

    def waiting_on(self, job_id: str) -> str | None:
        coder = self._coder_job(job_id)
        return coder[1] if coder is not None else self.store.waiting_on(job_id)

    async def answer(self, session_id: str, job_id: str, granted: bool, *, by: str,
                     note: str | None = None) -> Any:
        coder = self._coder_job(job_id)
        if coder is not None:
            self._coder_jobs[job_id] = coder
        async for c in super().answer(session_id, job_id, granted, by=by, note=note):
            yield c

    def flush(self) -> None:
        self.store.flush()

