"""A lean Server-Sent Events response: frames from an async generator of batches, no extra tasks.

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
    data = item.get("data")
    if "id" in item and "event" in item and isinstance(data, str) and "\n" not in data:  # a chunk (JSON: one line)
        return f"id: {item['id']}\nevent: {item['event']}\ndata: {data}\n\n".encode()
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
    """An ASGI response streaming batches of SSE frames until the generator ends or the client leaves.

    Each batch is one write; a batch ending with `{"end": True}` is the last (it carries the end
    of the body, so a finished run costs no extra write).
    """

    def __init__(self, batches: AsyncIterator[list[dict[str, Any]]]) -> None:  # the stream is the body
        self.batches = batches
        self.status_code = 200
        self.background = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
        ended = False
        try:
            async for batch in self.batches:
                ended = bool(batch) and "end" in batch[-1]
                body = b"".join(frame(item) for item in batch if "end" not in item)
                await send({"type": "http.response.body", "body": body, "more_body": not ended})
                if ended:
                    break
            if not ended:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:  # the client went away: nothing more to send
            pass
        finally:
            close = getattr(self.batches, "aclose", None)
            if close is not None:
                await close()
        if self.background is not None:
            await self.background()
