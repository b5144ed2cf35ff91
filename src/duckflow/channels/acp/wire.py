"""The stdio wire of `duckflow acp`: newline-delimited JSON-RPC 2.0, every malformed line answered with an error.

The `agent-client-protocol` package's own stdio reader logs a line it cannot parse and goes
on, so the editor never hears of it; this transport answers it instead (JSON-RPC 2.0 §5.1):
-32700 for text that is not JSON, -32600 for JSON that is not a request, a notification or a
response (an array, a number, a missing or non-string method, a bad id), before the package's
connection sees anything. Protocol frames go to the real standard output only; everything
else the process prints (a library's print, a C extension's chatter) is pointed at stderr, so
the stream cannot be desynchronised by a stray line.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from typing import Any, BinaryIO

MAX_LINE = 50 * 1024 * 1024  # one frame at most (the package's own default limit)


def error_frame(code: int, message: str, req_id: Any = None, data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": req_id, "error": err}


def check_frame(message: Any) -> dict[str, Any] | None:
    """A JSON-RPC error frame for a message that is not one the connection can take; None when it is."""
    if not isinstance(message, dict):
        kind = "a batch (array)" if isinstance(message, list) else type(message).__name__
        return error_frame(-32600, "Invalid request", None, {"details": f"expected a JSON object, got {kind}"})
    req_id = message.get("id")
    id_ok = req_id is None or (isinstance(req_id, (str, int)) and not isinstance(req_id, bool))
    if not id_ok:
        return error_frame(-32600, "Invalid request", None, {"details": "id must be a string, a number or null"})
    if message.get("jsonrpc") != "2.0":
        return error_frame(-32600, "Invalid request", req_id, {"details": 'jsonrpc must be "2.0"'})
    if "method" in message:
        if not isinstance(message["method"], str) or not message["method"]:
            return error_frame(-32600, "Invalid request", req_id, {"details": "method must be a string"})
        params = message.get("params")
        if params is not None and not isinstance(params, (dict, list)):
            return error_frame(-32602, "Invalid params", req_id, {"details": "params must be an object"})
        return None
    if "id" in message and ("result" in message or "error" in message):
        return None  # a response to one of our requests
    return error_frame(-32600, "Invalid request", req_id, {"details": "neither a request nor a response"})


class StdioWire:
    """A message transport (the package's `Transport` protocol) over this process's stdin / stdout."""

    def __init__(self, reader: BinaryIO, writer: BinaryIO) -> None:
        self._writer = writer
        self._lock = threading.Lock()
        self._queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self._closed = False
        threading.Thread(target=self._read, args=(reader,), name="acp-stdin", daemon=True).start()

    @classmethod
    def from_stdio(cls) -> StdioWire:
        """The real stdout kept for frames; fd 1 and `sys.stdout` then point at stderr."""
        sys.stdout.flush()
        out = os.fdopen(os.dup(1), "wb", buffering=0)
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        return cls(sys.stdin.buffer, out)

    def _read(self, reader: BinaryIO) -> None:
        try:
            while True:
                line = reader.readline(MAX_LINE + 1)
                if not line:
                    break
                if len(line) > MAX_LINE and not line.endswith(b"\n"):
                    while line and not line.endswith(b"\n"):  # drop the rest of the frame
                        line = reader.readline(MAX_LINE)
                    self._reply(error_frame(-32700, "Parse error", None, {"details": "the message is too long"}))
                    continue
                self._take(line)
        except (OSError, ValueError):
            pass
        finally:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, None)

    def _take(self, line: bytes) -> None:
        text = line.strip()
        if not text:
            return
        try:
            message = json.loads(text)
        except (ValueError, RecursionError):
            self._reply(error_frame(-32700, "Parse error", None, {"details": "the line is not JSON"}))
            return
        problem = check_frame(message)
        if problem is not None:
            if isinstance(message, dict) and "method" in message and "id" not in message:
                return  # a notification is never answered, even a bad one (JSON-RPC 2.0 §4.1)
            self._reply(problem)
            return
        self._loop.call_soon_threadsafe(self._queue.put_nowait, message)

    def _reply(self, frame: dict[str, Any]) -> None:
        self._write(frame)

    def _write(self, frame: dict[str, Any]) -> None:
        data = (json.dumps(frame, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        with self._lock:
            if self._closed:
                return
            try:
                self._writer.write(data)
                self._writer.flush()
            except (OSError, ValueError):
                self._closed = True

    async def send(self, message: dict[str, Any]) -> None:
        await asyncio.to_thread(self._write, message) if len(str(message)) > 65536 else self._write(message)

    async def receive(self) -> dict[str, Any] | None:
        return await self._queue.get()

    async def close(self) -> None:
        with self._lock:
            self._closed = True
