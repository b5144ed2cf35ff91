"""A minimal HTTP/1.1 server on 127.0.0.1 for provider tests: scripted replies, streaming, faults.

Replies are queued per path and served in order; every request is recorded (method, path,
headers, body). A reply can stream its body in chunks (chunked encoding), stall, or cut the
connection midway without the terminating chunk.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Reply:
    status: int = 200
    chunks: list[bytes | str] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "text/event-stream"
    cut: bool = False  # close the connection after the chunks, without the last chunk marker
    delay: float = 0.0  # before the status line
    chunk_delay: float = 0.0  # before each chunk
    stall: float = 0.0  # after the chunks, before ending (a read timeout in the client)


def json_reply(obj: Any, status: int = 200, **kw: Any) -> Reply:
    return Reply(status=status, chunks=[json.dumps(obj)], content_type="application/json", **kw)


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body or b"null")


ReplySource = Reply | Callable[[Request], Reply]


class FakeServer:
    def __init__(self) -> None:
        self.queues: dict[str, list[ReplySource]] = {}
        self.defaults: dict[str, ReplySource] = {}
        self.requests: list[Request] = []
        self._server: asyncio.Server | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def queue(self, path: str, *replies: ReplySource) -> FakeServer:
        self.queues.setdefault(path, []).extend(replies)
        return self

    def default(self, path: str, reply: ReplySource) -> FakeServer:
        self.defaults[path] = reply
        return self

    def bodies(self, path: str) -> list[Any]:
        return [r.json for r in self.requests if r.path == path]

    async def start(self) -> FakeServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    def _next(self, req: Request) -> Reply:
        queue = self.queues.get(req.path)
        source: ReplySource | None = queue.pop(0) if queue else self.defaults.get(req.path)
        if source is None:
            return json_reply({"error": f"fake server: nothing scripted for {req.path}"}, status=599)
        return source(req) if callable(source) else source

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            headers = {}
            for line in lines[1:]:
                if ":" in line:
                    k, v = line.split(":", 1)
                    headers[k.strip().lower()] = v.strip()
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            req = Request(method, path, headers, body)
            self.requests.append(req)
            reply = self._next(req)
            if reply.delay:
                await asyncio.sleep(reply.delay)
            head_lines = [f"HTTP/1.1 {reply.status} X", f"Content-Type: {reply.content_type}",
                          "Transfer-Encoding: chunked", "Connection: close"]
            head_lines += [f"{k}: {v}" for k, v in reply.headers.items()]
            writer.write(("\r\n".join(head_lines) + "\r\n\r\n").encode())
            await writer.drain()
            for chunk in reply.chunks:
                if reply.chunk_delay:
                    await asyncio.sleep(reply.chunk_delay)
                data = chunk.encode() if isinstance(chunk, str) else chunk
                writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                await writer.drain()
            if reply.stall:
                await asyncio.sleep(reply.stall)
            if not reply.cut:
                writer.write(b"0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.TimeoutError):
            pass
        finally:
            writer.close()


# ---- wire formats ------------------------------------------------------------------------

def sse(*events: tuple[str | None, Any]) -> list[str]:
    """Server-sent events, one chunk each: (event name or None, data object or raw string)."""
    out = []
    for name, data in events:
        text = data if isinstance(data, str) else json.dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
    return out


def openai_stream(pieces: list[str], *, tool_calls: list[dict[str, Any]] | None = None,
                  usage: tuple[int, int] | None = (11, 7), done: bool = True) -> list[str]:
    """Chat-completion chunks: text pieces, tool-call fragments (given raw), usage, [DONE]."""
    events: list[tuple[str | None, Any]] = []
    for p in pieces:
        events.append((None, {"choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]}))
    for frag in tool_calls or []:
        events.append((None, {"choices": [{"index": 0, "delta": {"tool_calls": [frag]}, "finish_reason": None}]}))
    events.append((None, {"choices": [{"index": 0, "delta": {},
                                       "finish_reason": "tool_calls" if tool_calls else "stop"}]}))
    if usage:
        events.append((None, {"choices": [], "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                                                        "total_tokens": sum(usage)}}))
    if done:
        events.append((None, "[DONE]"))
    return sse(*events)


def anthropic_stream(pieces: list[str], *, tool: tuple[str, str, list[str]] | None = None,
                     usage: tuple[int, int] = (25, 9), stop: bool = True) -> list[str]:
    """The Messages SSE sequence: text block deltas, optionally a tool_use block with JSON fragments."""
    ev: list[tuple[str | None, Any]] = [
        ("message_start", {"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "content": [],
            "usage": {"input_tokens": usage[0], "output_tokens": 1}}}),
        ("ping", {"type": "ping"}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
    ]
    for p in pieces:
        ev.append(("content_block_delta", {"type": "content_block_delta", "index": 0,
                                           "delta": {"type": "text_delta", "text": p}}))
    ev.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
    if tool:
        tool_id, name, fragments = tool
        ev.append(("content_block_start", {"type": "content_block_start", "index": 1, "content_block": {
            "type": "tool_use", "id": tool_id, "name": name, "input": {}}}))
        for f in fragments:
            ev.append(("content_block_delta", {"type": "content_block_delta", "index": 1,
                                               "delta": {"type": "input_json_delta", "partial_json": f}}))
        ev.append(("content_block_stop", {"type": "content_block_stop", "index": 1}))
    ev.append(("message_delta", {"type": "message_delta",
                                 "delta": {"stop_reason": "tool_use" if tool else "end_turn"},
                                 "usage": {"output_tokens": usage[1]}}))
    if stop:
        ev.append(("message_stop", {"type": "message_stop"}))
    return sse(*ev)


def ollama_stream(pieces: list[str], *, tool_calls: list[dict[str, Any]] | None = None,
                  done: bool = True) -> list[str]:
    lines = [json.dumps({"model": "m", "message": {"role": "assistant", "content": p}, "done": False}) + "\n"
             for p in pieces]
    if tool_calls:
        lines.append(json.dumps({"model": "m", "message": {"role": "assistant", "content": "",
                                                            "tool_calls": tool_calls}, "done": False}) + "\n")
    if done:
        lines.append(json.dumps({"model": "m", "message": {"role": "assistant", "content": ""}, "done": True,
                                 "done_reason": "stop", "prompt_eval_count": 13, "eval_count": 5}) + "\n")
    return lines
