"""The hot path as plain ASGI: `POST /v1/sessions/{id}/messages` answered with an SSE stream.

This one request is what every person's message costs, so it skips the framework's routing
and dependency machinery (measured with `duckflow bench server`: 2-3x less work per message at
500 at once). It checks exactly what the FastAPI route checks — the bearer token in constant
time (or the page's sign-in cookie), a JSON object with a `text` of 1..100000 characters (and uploaded image ids) read by the one body reader
(`channels.jsonbody.parse_json`), a session of this workspace (`api.session_problem`) — and then queues
the message and streams the run as the route does. Everything else (202 replies without
`Accept: text/event-stream`, CORS, every other endpoint) goes on to the app; the body cap of
the app's `BodyLimit` wraps this too.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import unquote

from starlette.requests import Request

from duckflow.channels.http.auth import allowed
from duckflow.channels.http.sse import SSEResponse
from duckflow.channels.http.unavailable import STATE_ERRORS
from duckflow.channels.http.unavailable import body as unavailable
from duckflow.channels.jsonbody import BadBody, parse_json

_PATH = re.compile(r"^/v1/sessions/([^/]+)/messages$")
MAX_TEXT = 100_000


class MessageFastPath:
    def __init__(self, app: Any, fastapi_app: Any) -> None:
        self.app = app
        self.fastapi_app = fastapi_app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        m = _PATH.match(scope.get("path", "")) if scope["type"] == "http" and scope["method"] == "POST" else None
        headers = dict(scope.get("headers") or []) if m else {}
        if m is None or b"text/event-stream" not in headers.get(b"accept", b""):
            await self.app(scope, receive, send)
            return
        state = self.fastapi_app.state
        seen = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in headers.items()}
        if not allowed(seen, "POST", state.settings.token, state.signins):
            await _json(send, 401, "missing or wrong bearer token: send `Authorization: Bearer TOKEN`",
                        [(b"www-authenticate", b"Bearer")])
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        try:
            data = parse_json(body, "a JSON object {\"text\": \"...\"}")
        except BadBody as exc:
            await _json(send, exc.status, exc.message)
            return
        text = data.get("text") if isinstance(data, dict) else None
        if not isinstance(text, str) or not 1 <= len(text) <= MAX_TEXT:
            await _json(send, 422, f"`text` must be a string of 1 to {MAX_TEXT} characters")
            return
        ids = data.get("images")
        images: list[str] = []
        if ids:  # uploaded image ids (POST /v1/images)
            from duckflow.channels.http.uploads import MAX_IMAGES, image_paths

            try:
                if not isinstance(ids, list) or len(ids) > MAX_IMAGES:
                    raise ValueError(f"`images` must be a list of at most {MAX_IMAGES} ids from POST /v1/images")
                images = image_paths(ids)
            except ValueError as exc:
                await _json(send, 422, str(exc))
                return
        from duckflow.channels.http.api import follow, session_problem

        sid = unquote(m.group(1))
        try:
            problem = session_problem(state.runner, sid)
            before = state.manager.submit(sid, text, "http", images=images or None) if problem is None else 0
        except STATE_ERRORS as exc:  # a damaged database: 503 with the file and the next step
            await _send(send, 503, unavailable(exc))
            return
        if problem is not None:
            await _json(send, 404, problem)
            return

        request = Request({**scope, "app": self.fastapi_app}, receive)
        stream = follow(request, sid, before, until_done=True, heartbeat_s=state.settings.heartbeat_s)
        await SSEResponse(stream)(scope, receive, send)


async def _json(send: Any, status: int, detail: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    await _send(send, status, json.dumps({"detail": detail}).encode(), extra)


async def _send(send: Any, status: int, body: bytes, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *(extra or [])]})
    await send({"type": "http.response.body", "body": body})
