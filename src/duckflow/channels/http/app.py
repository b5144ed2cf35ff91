"""The FastAPI app: health, the web page and its sign-in, the `/v1` API behind the token, and the webhooks.

`create_app(settings)` wires one `SessionRunner` (the engine seam), one `ChunkLog` (seqs and
resume) and one `ChannelManager` (queues and sends). Secure by default: the API needs the
bearer token (or the page's HttpOnly sign-in cookie, auth.py), CORS is off unless origins are configured, bodies are capped, and the Slack and
LINE webhooks exist only when their secrets are set (and verify every request).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, JSONResponse

from duckflow.channels.http.auth import (
    COOKIE,
    COOKIE_TTL_S,
    LoginCodes,
    SignIns,
    allowed,
    cookie_from,
    same,
)
from duckflow.channels.http.limits import BodyLimit
from duckflow.channels.seen import Seen

STATIC = Path(__file__).with_name("static")
# the page runs only its own script and talks only to this server (model output is never HTML)
PAGE_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
            "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")


@dataclass
class ServerSettings:
    token: str
    workspace: str = "."
    model_name: str | None = None
    host: str = "127.0.0.1"
    port: int = 8787
    cors_origins: list[str] = field(default_factory=list)
    max_body_bytes: int = 1_000_000
    heartbeat_s: float = 15.0
    ring: int = 2000
    max_running: int = 16  # companion tasks at once; more messages wait (and are told so)
    slack_signing_secret: str | None = None
    slack_bot_token: str | None = None
    slack_api_url: str | None = None
    line_channel_secret: str | None = None
    line_access_token: str | None = None
    line_api_url: str | None = None
    line_data_url: str | None = None
    state_dir: str | None = None
    # who may talk to the companion (and approve) from a chat channel: user ids, "*" = anyone
    # who can reach the bot; empty = nobody yet (a webhook reaches the workspace: opt in)
    slack_allowed: frozenset[str] = frozenset()
    line_allowed: frozenset[str] = frozenset()
    # several processes (docs/deploy.md): sessions, approvals and chunks on Redis and PostgreSQL
    redis_url: str | None = None
    database_url: str | None = None

    def allowed(self, channel: str, user: str) -> bool:
        people = self.slack_allowed if channel == "slack" else self.line_allowed
        return "*" in people or (bool(user) and user in people)

    @classmethod
    def from_env(cls, token: str, environ: dict[str, str] | None = None, **kw: Any) -> ServerSettings:
        env = os.environ if environ is None else environ
        return cls(token=token,
                   slack_signing_secret=env.get("SLACK_SIGNING_SECRET") or None,
                   slack_bot_token=env.get("SLACK_BOT_TOKEN") or None,
                   slack_api_url=env.get("SLACK_API_URL") or None,
                   line_channel_secret=env.get("LINE_CHANNEL_SECRET") or None,
                   line_access_token=env.get("LINE_CHANNEL_ACCESS_TOKEN") or None,
                   line_api_url=env.get("LINE_API_URL") or None,
                   line_data_url=env.get("LINE_DATA_API_URL") or None,
                   slack_allowed=_ids(env.get("SLACK_ALLOWED_USERS")),
                   line_allowed=_ids(env.get("LINE_ALLOWED_USERS")),
                   **kw)


def _ids(value: str | None) -> frozenset[str]:
    return frozenset(x.strip() for x in (value or "").split(",") if x.strip())


SWITCH_INTERVAL_S = 0.0005  # how long a busy background thread may keep the GIL from the event loop


def tune_gc() -> None:
    """Garbage collection and thread switching for a long-running server holding many sessions.

    Python's default thresholds run a full collection every few thousand allocations; with
    hundreds of idle sessions in memory each one scans them all (measured: ~1 s stalls at 500
    sessions in `duckflow bench server`). Objects alive after start-up are frozen out of the
    scans and the oldest generation is collected rarely (every 100 M allocations, as before;
    reference counting still frees everything that is not in a cycle at once). The youngest
    generation is collected every 10,000 allocations, not 50,000: each of its collections
    scans what was made since the last, and at 500 paced sessions under load those pauses
    reached 80-190 ms (31-65 ms at 10,000; p99 TTFC at 500 85-112 ms against 118-489 ms,
    two runs each while the test suite ran, gen2 never ran within a run).

    The event loop lets go of the GIL in every SQLite call; a writer thread (trace, event log,
    chunk log) that takes it then keeps it for the whole switch interval, 5 ms by default, before
    the loop gets it back. With several such calls per message that was the tail of the time to
    first chunk at 500 sessions (docs/server.md has the figures).
    """
    import gc
    import sys

    gc.freeze()
    gc.set_threshold(10_000, 50, 200)
    sys.setswitchinterval(SWITCH_INTERVAL_S)


async def bearer(request: Request) -> None:
    """The `/v1` guard: `Authorization: Bearer <token>` (constant time), or the page's sign-in cookie."""
    st = request.app.state
    if not allowed({k.lower(): v for k, v in request.headers.items()}, request.method, st.settings.token, st.signins):
        raise HTTPException(401, "missing or wrong bearer token: send `Authorization: Bearer TOKEN` "
                                 "(the token is in $DUCKFLOW_HOME/server-token or DUCKFLOW_SERVER_TOKEN)",
                            headers={"WWW-Authenticate": "Bearer"})


def create_app(settings: ServerSettings, *, runner: Any = None) -> FastAPI:
    from duckflow.channels.http.api import api_router
    from duckflow.channels.manager import ChannelManager, IdentityMap
    from duckflow.channels.runner import SessionRunner
    from duckflow.channels.streamlog import ChunkLog
    from duckflow.paths import duckflow_home

    state_dir = Path(settings.state_dir) if settings.state_dir else duckflow_home() / "server"
    state_dir.mkdir(parents=True, exist_ok=True)
    state_dir.chmod(0o700)  # the chunk log holds conversations and file contents: this user only
    if settings.redis_url or settings.database_url:  # several processes: channels/shared
        from duckflow.channels.shared.wiring import build

        runner, chunks, manager = build(settings, runner)
    else:
        if runner is None:
            runner = SessionRunner(settings.workspace, model_name=settings.model_name,
                                   max_running=settings.max_running)
        chunks = ChunkLog(state_dir / "chunks.db", ring=settings.ring)
        manager = ChannelManager(runner, chunks, IdentityMap(state_dir / "identities.db"))
    seen: Seen
    if getattr(manager, "db", None) is not None:  # a redelivery to another process is dropped too
        from duckflow.channels.shared.pgstores import PgSeenEvents

        seen = PgSeenEvents(manager.db)
    else:
        from duckflow.channels.seen import SeenEvents

        seen = SeenEvents(state_dir / "webhook_events.db")

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        start, stop = getattr(manager, "start", None), getattr(manager, "stop", None)
        if start is not None:
            await start()
        yield
        if stop is not None:
            await stop()
        else:
            await manager.drain(timeout=5)
        chunks.close()
        seen.close()
        manager.identities.close()
        runner.close()
        finish = getattr(manager, "finish", None)
        if finish is not None:
            finish()

    app = FastAPI(title="Duckflow", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    app.state.settings = settings
    app.state.runner = runner
    app.state.chunks = chunks
    app.state.manager = manager
    app.state.logins = LoginCodes()
    app.state.signins = SignIns(settings.token, revoked_file=state_dir / "signed-out")

    @app.get("/healthz")
    async def healthz() -> dict[str, Any]:
        return {"ok": True}

    @app.get("/")
    async def page() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html",
                            headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer",
                                     "Content-Security-Policy": PAGE_CSP,
                                     "X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY"})

    @app.get("/static/{name}")
    async def static(name: str) -> FileResponse:
        files = {"app.js": "text/javascript", "talk.js": "text/javascript", "md.js": "text/javascript",
                 "words.js": "text/javascript",
                 "essay.js": "text/javascript", "style.css": "text/css"}
        if name not in files:
            raise HTTPException(404, "no such file")
        return FileResponse(STATIC / name, media_type=files[name],
                            headers={"X-Content-Type-Options": "nosniff"})

    def signed_in(request: Request) -> JSONResponse:
        """The sign-in cookie for this browser: every tab sends it; no script can read it."""
        response = JSONResponse({"signed_in": True}, headers={"Cache-Control": "no-store"})
        response.set_cookie(COOKIE, app.state.signins.issue(), max_age=COOKIE_TTL_S, path="/", httponly=True,
                            samesite="strict", secure=request.url.scheme == "https")
        return response

    @app.post("/auth/exchange")
    async def exchange(request: Request) -> JSONResponse:
        """The page trades a one-time code (from the start-up link) for the sign-in cookie."""
        from duckflow.channels.jsonbody import read_json

        body = await read_json(request, "a JSON object {\"code\": \"...\"}")
        code = body.get("code") if isinstance(body, dict) else None
        if not isinstance(code, str) or not app.state.logins.redeem(code):
            raise HTTPException(401, "this login link was already used or is unknown: "
                                     "restart `duckflow serve` for a new one, or paste the token")
        return signed_in(request)

    @app.post("/auth/login")
    async def login(request: Request) -> JSONResponse:
        """The pasted token, traded for the sign-in cookie (the page keeps no token itself)."""
        from duckflow.channels.jsonbody import read_json

        body = await read_json(request, "a JSON object {\"token\": \"...\"}")
        token = body.get("token") if isinstance(body, dict) else None
        if not isinstance(token, str) or not token.strip() or not same(token.strip(), settings.token):
            raise HTTPException(401, "that is not this server's token (it is in $DUCKFLOW_HOME/server-token "
                                     "or DUCKFLOW_SERVER_TOKEN)")
        return signed_in(request)

    @app.post("/auth/logout")
    async def logout(request: Request) -> JSONResponse:
        """Sign this browser out: the cookie is revoked (a copy of it no longer works) and cleared."""
        app.state.signins.revoke(cookie_from(request.headers.get("cookie", "")))
        response = JSONResponse({"signed_in": False}, headers={"Cache-Control": "no-store"})
        response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
        return response

    from fastapi.responses import Response

    from duckflow.channels.http.unavailable import STATE_ERRORS, body

    async def unavailable(_request: Request, exc: Exception) -> Response:  # a damaged database: 503, one line
        return Response(body(exc), status_code=503, media_type="application/json")

    for kind in STATE_ERRORS:
        app.add_exception_handler(kind, unavailable)
    app.include_router(api_router(), prefix="/v1", dependencies=[Depends(bearer)])
    from duckflow.channels.http.uploads import UPLOAD_PATH, uploads_router
    from duckflow.orchestra.images import MAX_IMAGE_BYTES

    app.include_router(uploads_router(), prefix="/v1", dependencies=[Depends(bearer)])
    from duckflow.channels.http.essays import essays_router  # SmartAO: POST /v1/essays/{task}

    app.include_router(essays_router(), prefix="/v1", dependencies=[Depends(bearer)])
    from duckflow.channels.line.webhook import line_router
    from duckflow.channels.slack.events import slack_router

    app.include_router(slack_router(settings, manager, seen))
    app.include_router(line_router(settings, manager, seen))

    if settings.cors_origins:
        from starlette.middleware.cors import CORSMiddleware

        app.add_middleware(CORSMiddleware, allow_origins=settings.cors_origins,
                           allow_methods=["GET", "POST", "DELETE"],
                           allow_headers=["Authorization", "Content-Type", "Last-Event-ID"])
    else:  # the streamed message as plain ASGI (no CORS headers to add there)
        from duckflow.channels.http.fastpath import MessageFastPath

        app.add_middleware(MessageFastPath, fastapi_app=app)
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes,
                       larger={UPLOAD_PATH: max(MAX_IMAGE_BYTES, settings.max_body_bytes)})
    return app
