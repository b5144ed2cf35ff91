"""Where `duckflow serve` finds Redis and PostgreSQL, and the shared parts it runs on then.

`urls(redis, database, config)`: the flags, else `DUCKFLOW_REDIS_URL` / `DUCKFLOW_DATABASE_URL`,
else the `[server]` section of the config; both or neither (one alone is a clear error).
`build(settings, ...)` migrates the schema, checks that this process serves the workspace the
database serves (every process runs turns on the same files: a shared volume mounted at the
same path), and returns the runner, chunk log and manager in place of the SQLite ones.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from duckflow.errors import DuckflowError

LEASE_ENV = "DUCKFLOW_SERVER_LEASE_S"  # how long a dead process keeps its sessions (default 10 s)


def urls(redis: str | None, database: str | None, config: Any = None,
         environ: dict[str, str] | None = None) -> tuple[str | None, str | None]:
    env = os.environ if environ is None else environ
    server = getattr(config, "server", None)
    redis = redis or env.get("DUCKFLOW_REDIS_URL") or getattr(server, "redis_url", None) or None
    database = database or env.get("DUCKFLOW_DATABASE_URL") or getattr(server, "database_url", None) or None
    if bool(redis) != bool(database):
        have, need = ("--redis", "--database") if redis else ("--database", "--redis")
        raise DuckflowError(f"{have} was given without {need}: several processes need both",
                            hint="pass both (or DUCKFLOW_REDIS_URL and DUCKFLOW_DATABASE_URL), or neither for "
                                 "one process on SQLite")
    return redis, database


def check_workspace(db: Any, workspace: Path) -> None:
    """The database serves one workspace; a process with another path (or none it can write) refuses."""
    if not workspace.is_dir() or not os.access(workspace, os.R_OK | os.W_OK | os.X_OK):
        raise DuckflowError(f"workspace {workspace} is not a folder this process can read and write",
                            hint="mount the shared workspace volume here (docs/server.md: several processes)")
    db.execute("INSERT INTO deployment VALUES ('workspace', %s) ON CONFLICT DO NOTHING", (str(workspace),))
    served = db.query("SELECT value FROM deployment WHERE key='workspace'")[0]["value"]
    if served != str(workspace):
        raise DuckflowError(f"this database serves the workspace {served}, not {workspace}",
                            hint=f"mount the same shared volume at {served} on every process (or give this "
                                 "workspace its own --database and --redis)")


def build(settings: Any, runner: Any = None) -> tuple[Any, Any, Any]:
    """(runner, chunk log, manager) on Redis and PostgreSQL."""
    from duckflow.channels.shared.lease import SharedManager
    from duckflow.channels.shared.pg import Database
    from duckflow.channels.shared.pgstores import PgChunkArchive, PgIdentityMap
    from duckflow.channels.shared.redislog import RedisChunkLog
    from duckflow.channels.shared.runner import SharedRunner

    try:
        import redis  # noqa: F401
    except ImportError:
        raise DuckflowError("--redis needs the redis package (the [redis] extra)",
                            hint="pip install 'duckflow-agent[redis]'") from None
    db = Database(settings.database_url)
    db.migrate()
    workspace = Path(settings.workspace).expanduser().resolve()
    check_workspace(db, workspace)
    chunks = RedisChunkLog(settings.redis_url, PgChunkArchive(db, settings.ring), ring=settings.ring)
    chunks.sync_call(chunks.sync.ping)
    if runner is None:
        runner = SharedRunner(workspace, model_name=settings.model_name, max_running=settings.max_running, db=db,
                              redis_url=settings.redis_url)
    lease = float(os.environ.get(LEASE_ENV) or 10.0)
    manager = SharedManager(runner, chunks, PgIdentityMap(db), lease_s=max(0.5, lease))
    manager.db = db
    return runner, chunks, manager
