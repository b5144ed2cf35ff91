"""A lean Server-Sent Events response: one frame per item of an async generator, no extra tasks.

Frames follow the WHATWG HTML "server-sent events" format (`id:`, `event:`, `data:` lines, a blank
line; `:` starts a comment, used for heartbeats). The generator itself waits, heartbeats and
stops; a client that went away is noticed at the next write (at the latest the next heartbeat),
so a response costs no task group per connection — what lets one process hold 500 live streams.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from starlette.responses import Response

HEADERS = [(b"content-type", b"text/event-stream; charset=utf-8"), (b"cache-control", b"no-store"),
           (b"x-accel-buffering", b"no")]


def frame(item: dict[str, Any]) -> bytes:
    """One SSE frame from {id?, event?, data?} or {comment}."""
    if "comment" in item:
        return f": {item['comment']}\n\n".encode()
    out = []
    if "id" in item:
        out.append(f"id: {item['id']}")
    if "event" in item:
        out.append(f"event: {item['event']}")
    for line in str(item.get("data", "")).split("\n"):
        out.append(f"data: {line}")
    return ("\n".join(out) + "\n\n").encode()


class SSEResponse(Response):
    """An ASGI response streaming `items` as SSE frames until the generator ends or the client leaves."""

    def __init__(self, items: AsyncIterator[dict[str, Any]]) -> None:  # no body: the stream is the body
        self.items = items
        self.status_code = 200
        self.background = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
        try:
            async for item in self.items:
                await send({"type": "http.response.body", "body": frame(item), "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:  # the client went away: nothing more to send
            pass
        finally:
            close = getattr(self.items, "aclose", None)
            if close is not None:
                await close()
        if self.background is not None:
            await self.background()
