"""`duckflow serve --workers N` on one port, and what `serve --redis --database` refuses at start."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from tests.channels.scale.conftest import AUTH, SRC, read_sse, start_serve


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def _serve_once(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUCKFLOW_")}
    env.update({"PYTHONPATH": SRC, "DUCKFLOW_HOME": str(tmp_path / "home"), "DUCKFLOW_CONFIG": os.devnull})
    (tmp_path / "ws").mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "duckflow", "serve", "-w", str(tmp_path / "ws"),
                           "--port", "1", *args], env=env, capture_output=True, text=True, timeout=60)


def test_workers_without_the_shared_stores_or_with_one_of_them_are_refused_in_one_line(tmp_path: Path) -> None:
    done = _serve_once(tmp_path, "--workers", "2")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "--workers needs --redis and --database" in done.stderr
    done = _serve_once(tmp_path, "--redis", "redis://127.0.0.1:1/0")
    assert done.returncode != 0 and "--redis was given without --database" in done.stderr


def test_a_process_with_another_workspace_on_the_same_database_refuses_to_start(
        tmp_path: Path, serve: Any, redis_server: Any, database: str) -> None:
    ws, other = tmp_path / "ws", tmp_path / "other"
    ws.mkdir()
    other.mkdir()
    serve("a", ws, redis_server.url, database)
    b = start_serve(tmp_path, "b", other, redis_server.url, database, wait=False)
    assert b.proc.wait(60) != 0
    out = b.output()
    assert f"this database serves the workspace {ws}" in out and "shared volume" in out
    assert "Traceback" not in out


def test_an_unreachable_store_at_start_is_one_line(tmp_path: Path, database: str) -> None:
    done = _serve_once(tmp_path, "--redis", "redis://127.0.0.1:9/0", "--database", database)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "Redis at redis://127.0.0.1:9/0 is unreachable" in done.stderr


def test_workers_serve_one_port_from_several_processes_sharing_every_session(
        tmp_path: Path, serve: Any, redis_server: Any, database: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    srv = serve("w", ws, redis_server.url, database, "--workers", "3")
    deadline = time.monotonic() + 30
    while len(_children(srv.proc.pid)) < 3:
        assert time.monotonic() < deadline, "the workers did not start"
        time.sleep(0.1)
    sids = [httpx.post(srv.url + "/v1/sessions", headers=AUTH).json()["session_id"] for _ in range(6)]

    def talk(sid: str) -> list[dict[str, Any]]:
        with httpx.Client(timeout=60) as client:  # a new connection each: any worker may answer
            with client.stream("POST", f"{srv.url}/v1/sessions/{sid}/messages", json={"text": "hello?"},
                               headers={**AUTH, "Accept": "text/event-stream"}) as r:
                return read_sse(r)

    with ThreadPoolExecutor(6) as pool:
        runs = list(pool.map(talk, sids))
    for run in runs:
        assert run[-1]["type"] == "done" and [c["seq"] for c in run] == list(range(1, len(run) + 1))
    listed = {s["session_id"] for s in httpx.get(srv.url + "/v1/sessions?limit=50", headers=AUTH).json()["sessions"]}
    assert set(sids) <= listed
    assert "3 processes on one port" in srv.output()
