"""Request guards as plain ASGI middleware: a body size cap and access logs with secrets cut out."""

from __future__ import annotations

import json
import logging
import re
from typing import Any

Scope = dict[str, Any]
ASGIApp = Any

_SECRET_QUERY = re.compile(r"(?i)\b(token|code|access_token|key|secret)=[^&\s\"]+")


class BodyLimit:
    """Refuses a request body larger than `max_bytes` with 413, whether or not it says its length.

    `larger` gives single paths their own cap (an image upload).
    """

    def __init__(self, app: ASGIApp, max_bytes: int, larger: dict[str, int] | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.larger = larger or {}

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cap = self.larger.get(scope.get("path", ""), self.max_bytes)
        for name, value in scope.get("headers") or []:
            if name == b"content-length":
                try:
                    too_big = int(value) > cap
                except ValueError:
                    too_big = True
                if too_big:
                    await _too_large(send, cap)
                    return
        seen = 0

        async def counted() -> Any:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > cap:
                    raise _BodyTooLarge()
            return message

        try:
            await self.app(scope, counted, send)
        except _BodyTooLarge:
            await _too_large(send, cap)


class _BodyTooLarge(Exception):
    pass


async def _too_large(send: Any, limit: int) -> None:
    body = json.dumps({"error": f"request body larger than {limit} bytes"}).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class RedactSecrets(logging.Filter):
    """Cuts `token=`, `code=` and the like out of log records (uvicorn's access log included)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.args and isinstance(record.args, tuple):
            record.args = tuple(_SECRET_QUERY.sub(r"\1=***", a) if isinstance(a, str) else a
                                for a in record.args)
        if isinstance(record.msg, str):
            record.msg = _SECRET_QUERY.sub(r"\1=***", record.msg)
        return True


def redact_access_log() -> None:
    for name in ("uvicorn.access", "uvicorn.error"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactSecrets) for f in logger.filters):
            logger.addFilter(RedactSecrets())
