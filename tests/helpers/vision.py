"""Real image files (a PNG built with zlib, stdlib only) and a fake vision model: an OpenAI-compatible
server on 127.0.0.1 in a thread that reads the image part of the request and says what it saw."""

from __future__ import annotations

import base64
import json
import struct
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.helpers.fakeserver import openai_stream


def png(width: int, height: int, rgb: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    """A real RGB PNG of one colour (signature, IHDR, IDAT, IEND with their CRCs)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    rows = b"".join(b"\0" + bytes(rgb) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def seen_in(body: dict[str, Any]) -> list[str]:
    """What the request's last user message carries as images: `image/png 3x2` per data-URL part."""
    content = body["messages"][-1]["content"]
    found = []
    for part in content if isinstance(content, list) else []:
        if part.get("type") != "image_url":
            continue
        url = part["image_url"]["url"]
        head, _, data = url.partition(";base64,")
        raw = base64.b64decode(data)
        w, h = struct.unpack(">II", raw[16:24]) if raw.startswith(b"\x89PNG") else (0, 0)
        found.append(f"{head.removeprefix('data:')} {w}x{h}")
    return found


class VisionServer:
    """`with VisionServer() as v:` — `v.url` is the base URL (`.../v1`); `v.bodies` the requests."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                outer.bodies.append(body)
                seen = seen_in(body)
                text = f"I see {', '.join(seen)}." if seen else "I see no image."
                data = "".join(openai_stream([text])).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> VisionServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
