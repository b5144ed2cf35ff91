"""Fixtures for `duckflow serve --redis --database`: a real redis-server and PostgreSQL, real serve processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.channels.server.conftest import fake_api  # noqa: F401  (the LINE API stand-in, a fixture)
from tests.helpers.stores import PostgresServer, RedisServer, free_port, postgres_bin, redis_binary

pytest.importorskip("fastapi")
pytest.importorskip("redis")
pytest.importorskip("psycopg")
if redis_binary() is None:
    pytest.skip("redis-server is not installed (.ci/run installs it)", allow_module_level=True)
if postgres_bin() is None:
    pytest.skip("PostgreSQL's initdb/pg_ctl are not installed (.ci/run installs postgresql)",
                allow_module_level=True)

SRC = str(Path(__file__).resolve().parents[3] / "src")
TOKEN = "scale-test-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PostgresServer]:
    server = PostgresServer()
    try:
        server.start()
    except RuntimeError as exc:
        server.remove()
        pytest.skip(f"PostgreSQL could not start here: {exc}")
    yield server
    server.remove()


@pytest.fixture
def database(pg_server: PostgresServer) -> str:
    return pg_server.new_database()


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    folder = tmp_path / "redis"
    folder.mkdir()
    server = RedisServer(folder)
    server.start()
    yield server
    server.stop()


@dataclass
class Serve:
    proc: subprocess.Popen[bytes]
    url: str
    home: Path
    log: Path
    port: int
    argv: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


def start_serve(tmp_path: Path, name: str, workspace: Path, redis_url: str, database: str,
                *extra: str, env_extra: dict[str, str] | None = None, wait: bool = True) -> Serve:
    import httpx

    home = tmp_path / f"home-{name}"
    home.mkdir(exist_ok=True)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "LINE_", "DUCKFLOW_"))}
    env.update({"PYTHONPATH": SRC, "DUCKFLOW_HOME": str(home), "DUCKFLOW_CONFIG": os.devnull,
                "DUCKFLOW_SERVER_TOKEN": TOKEN, "DUCKFLOW_SERVER_LEASE_S": "2", **(env_extra or {})})
    log = tmp_path / f"serve-{name}.log"
    argv = [sys.executable, "-m", "duckflow", "serve", "--host", "127.0.0.1", "--port", str(port), "-w",
            str(workspace), "--model", "scripted:demo", "--redis", redis_url, "--database", database, *extra]
    with log.open("ab") as out:
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT)
    srv = Serve(proc, f"http://127.0.0.1:{port}", home, log, port, argv, env)
    if not wait:
        return srv
    deadline = time.monotonic() + 30
    while True:
        try:
            if httpx.get(srv.url + "/healthz", timeout=1).status_code == 200:
                return srv
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            srv.stop()
            raise AssertionError(f"serve {name} did not start:\n{srv.output()}")
        time.sleep(0.1)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Any]:
    started: list[Serve] = []

    def make(*args: Any, **kw: Any) -> Serve:
        srv = start_serve(tmp_path, *args, **kw)
        started.append(srv)
        return srv

    yield make
    for srv in started:
        srv.stop()


def read_sse(response: Any, *, stop_after: int | None = None) -> list[dict[str, Any]]:
    """The chunks of an SSE response (until it ends, or after `stop_after` chunks)."""
    from tests.channels.server.conftest import sse_events

    got: list[dict[str, Any]] = []
    for ev in sse_events(response.iter_lines()):
        if ev.get("event") == "gap":
            raise AssertionError(f"a gap: {ev}")
        if ev.get("event") == "chunk":
            chunk = json.loads(ev["data"])
            assert int(ev["id"]) == chunk["seq"]
            got.append(chunk)
            if stop_after is not None and len(got) >= stop_after:
                break
    return got
