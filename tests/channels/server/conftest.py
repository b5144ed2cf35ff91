"""Fixtures for channel tests: a real uvicorn server on 127.0.0.1 in a thread, with the app's parts."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from fastapi import Request  # noqa: E402 - after the skips; the fake API's handler annotation needs it here

TOKEN = "test-token-0123456789abcdef"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Live:
    url: str
    app: Any
    workspace: Path
    server: Any
    thread: Any = None

    def stop(self) -> None:
        """Stop the server (its shutdown closes the app's stores), as a restart would."""
        self.server.should_exit = True
        self.thread.join(10)

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {TOKEN}"}


def start_server(app: Any) -> tuple[Any, threading.Thread, int]:
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                           access_log=False, lifespan="on", timeout_graceful_shutdown=1))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    return server, thread, port


@pytest.fixture
def live(tmp_path: Path) -> Iterator[Callable[..., Live]]:
    """`live(**settings)`: start an app for a scripted-demo workspace; stopped after the test."""
    from duckflow.channels.http.app import ServerSettings, create_app

    running: list[tuple[Any, threading.Thread]] = []

    def make(runner: Any = None, **kw: Any) -> Live:
        ws = tmp_path / "ws"
        ws.mkdir(exist_ok=True)
        kw.setdefault("model_name", "scripted:demo")
        kw.setdefault("state_dir", str(tmp_path / "server"))
        settings = ServerSettings(token=TOKEN, workspace=str(ws), **kw)
        app = create_app(settings, runner=runner)
        server, thread, port = start_server(app)
        running.append((server, thread))
        return Live(f"http://127.0.0.1:{port}", app, ws, server, thread)

    yield make
    for server, thread in running:
        server.should_exit = True
        thread.join(10)


def sse_events(lines: Any) -> Iterator[dict[str, Any]]:
    """Parse SSE lines (an iterator of str) into {id, event, data, comment} dicts."""
    ev: dict[str, Any] = {}
    for line in lines:
        if line == "":
            if ev:
                yield ev
            ev = {}
            continue
        if line.startswith(":"):
            yield {"comment": line[1:].strip()}
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        ev[name] = ev.get(name, "") + ("\n" if name == "data" and name in ev else "") + value
    if ev:
        yield ev


@dataclass
class FakeApi:
    """A stand-in for Slack's or LINE's web API on 127.0.0.1: records calls, replies as told."""

    url: str
    calls: list[dict[str, Any]]
    replies: dict[str, list[tuple[int, Any]]]

    def of(self, path_end: str) -> list[dict[str, Any]]:
        return [c for c in self.calls if c["path"].endswith(path_end)]

    def wait_for(self, path_end: str, n: int = 1, timeout: float = 15.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while len(self.of(path_end)) < n:
            if time.monotonic() > deadline:
                raise AssertionError(f"expected {n} call(s) to {path_end}, got {self.calls}")
            time.sleep(0.05)
        return self.of(path_end)


@pytest.fixture
def fake_api() -> Iterator[Callable[[], FakeApi]]:
    import json as _json
    from urllib.parse import parse_qs

    from fastapi import FastAPI
    from fastapi.responses import JSONResponse, Response

    running: list[tuple[Any, threading.Thread]] = []

    def make() -> FakeApi:
        app = FastAPI()
        calls: list[dict[str, Any]] = []
        replies: dict[str, list[tuple[int, Any]]] = {}

        @app.api_route("/{path:path}", methods=["GET", "POST"])
        async def anything(request: Request, path: str) -> Any:
            raw = await request.body()
            body: Any = None
            if raw:
                ctype = request.headers.get("content-type", "")
                body = _json.loads(raw) if "json" in ctype else {k: v[0] for k, v in parse_qs(raw.decode()).items()}
            calls.append({"path": "/" + path, "method": request.method, "headers": dict(request.headers),
                          "body": body})
            for key, queue in replies.items():
                if ("/" + path).endswith(key) and queue:
                    status, content = queue.pop(0)
                    if isinstance(content, bytes):
                        return Response(content, status_code=status, media_type="application/octet-stream")
                    return JSONResponse(content, status_code=status)
            return JSONResponse({"ok": True, "ts": f"{time.time():.6f}"})

        server, thread, port = start_server(app)
        running.append((server, thread))
        return FakeApi(f"http://127.0.0.1:{port}", calls, replies)

    yield make
    for server, thread in running:
        server.should_exit = True
        thread.join(10)


def wait_until(check: Callable[[], Any], timeout: float = 15.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.05)
