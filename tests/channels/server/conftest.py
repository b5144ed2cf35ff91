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
pytest.importorskip("sse_starlette")

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

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {TOKEN}"}


def start_server(app: Any) -> tuple[Any, threading.Thread, int]:
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                           access_log=False, lifespan="on"))
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
        return Live(f"http://127.0.0.1:{port}", app, ws, server)

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
