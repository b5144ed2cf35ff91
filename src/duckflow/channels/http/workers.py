"""`duckflow serve --workers N`: the app factory each of uvicorn's N worker processes calls.

The parent checks everything once (flags, token, Redis, PostgreSQL, the workspace) and puts the
settings in `DUCKFLOW_SERVE_WORKER` (JSON, no secret: each worker reads the token as the parent
did, from DUCKFLOW_SERVER_TOKEN or the 0600 file); uvicorn binds the port once and its workers
share it. Every worker is a full server on the shared Redis and PostgreSQL, so any of them
answers any request.
"""

from __future__ import annotations

import json
import os
from typing import Any

ARGS_ENV = "DUCKFLOW_SERVE_WORKER"


def make_app() -> Any:
    from duckflow.channels.http.app import ServerSettings, create_app, tune_gc
    from duckflow.channels.http.auth import is_loopback, resolve_token
    from duckflow.channels.http.limits import redact_access_log
    from duckflow.core import pacing

    kw = json.loads(os.environ[ARGS_ENV])
    token, _ = resolve_token(loopback=is_loopback(kw["host"]))
    app = create_app(ServerSettings.from_env(token, **kw))
    redact_access_log()
    tune_gc()
    pacing.inline_allowed = False
    return app


def run_workers(settings: Any, workers: int, *, debug: bool) -> None:
    """Start `workers` processes on the settings' host and port (uvicorn's supervisor)."""
    import uvicorn

    keys = ("workspace", "model_name", "host", "port", "cors_origins", "max_body_bytes", "max_running",
            "state_dir", "redis_url", "database_url")
    os.environ[ARGS_ENV] = json.dumps({k: getattr(settings, k) for k in keys})
    uvicorn.run(f"{__name__}:make_app", factory=True, workers=workers, host=settings.host, port=settings.port,
                log_level="debug" if debug else "warning", access_log=debug, server_header=False,
                proxy_headers=False, timeout_graceful_shutdown=5)


def preflight(settings: Any) -> None:
    """What each worker will need, checked once before they start (one line when it fails)."""
    from pathlib import Path

    from duckflow.channels.shared.pg import Database
    from duckflow.channels.shared.redislog import RedisChunkLog
    from duckflow.channels.shared.wiring import check_workspace

    db = Database(settings.database_url)
    try:
        db.migrate()
        check_workspace(db, Path(settings.workspace).expanduser().resolve())
    finally:
        db.close()
    log = RedisChunkLog(settings.redis_url, None)
    try:
        log.sync_call(log.sync.ping)
    finally:
        log.close()
