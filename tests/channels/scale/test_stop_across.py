"""Stop across processes: two real `duckflow serve` processes on one Redis and one PostgreSQL; the turn runs on
A, the Stop button's request (or `/cancel` typed) lands on B, and A's turn is cancelled at once — the stream
ends `cancelled` with the line true of what changed, the state kept, and the next message works."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.channels.scale.conftest import AUTH, read_sse


def _chunks(url: str, sid: str) -> list[dict[str, Any]]:
    return list(httpx.get(f"{url}/v1/sessions/{sid}/chunks", headers=AUTH, timeout=10).json()["chunks"])


def _until(check: Any, timeout: float = 30.0) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = check()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError("timed out")


@pytest.mark.parametrize("how", ["button", "/cancel"])
def test_a_stop_on_another_process_cancels_the_turn_where_it_runs(
        tmp_path: Path, serve: Any, redis_server: Any, database: str, how: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    slow = {"DUCKFLOW_DEMO_DELAY": "0.25"}  # the demo model writes a word every 0.25 s
    a = serve("a", ws, redis_server.url, database, env_extra=slow)
    b = serve("b", ws, redis_server.url, database, env_extra=slow)
    sid = httpx.post(a.url + "/v1/sessions", headers=AUTH, timeout=10).json()["session_id"]
    idle = httpx.post(f"{b.url}/v1/sessions/{sid}/stop", headers=AUTH, timeout=10).json()
    assert idle["stopped"] is False  # nothing runs yet, on any process

    r = httpx.post(f"{a.url}/v1/sessions/{sid}/messages", headers=AUTH, json={"text": "Create hello.py"}, timeout=10)
    assert r.status_code == 202  # A took the session's lease: the turn runs on A
    _until(lambda: any(c["type"] == "delta" for c in _chunks(b.url, sid)))  # the model is writing
    assert not [c for c in _chunks(b.url, sid) if c["type"] == "done"]
    asked = time.monotonic()
    if how == "button":
        stop = httpx.post(f"{b.url}/v1/sessions/{sid}/stop", headers=AUTH, timeout=10)
        assert stop.status_code == 200 and stop.json()["stopped"] is True, stop.text
    else:
        assert httpx.post(f"{b.url}/v1/sessions/{sid}/messages", headers=AUTH, json={"text": "/cancel"},
                          timeout=10).status_code == 202
    done = _until(lambda: [c for c in _chunks(b.url, sid) if c["type"] == "done"], timeout=10)
    assert time.monotonic() - asked < 3  # at once, not when the model would have finished (a minute)
    assert done[-1]["data"]["ending"] == "cancelled"
    assert done[-1]["data"]["text"].startswith("Cancelled — nothing was changed.")
    said = [c for c in _chunks(a.url, sid) if c["type"] == "notice" and c["data"]["code"] == "cancelled"]
    assert len(said) == 1  # one turn cancelled, once
    state = _until(lambda: (s := httpx.get(f"{b.url}/v1/sessions/{sid}", headers=AUTH, timeout=10).json())
                   and not s["busy"] and s)
    assert state["task"] == "Create hello.py" and state["status"] == "REQUIRES_USER_INPUT"  # kept
    assert not (ws / "hello.py").exists()
    listed = httpx.get(a.url + "/v1/sessions", headers=AUTH, timeout=10).json()["sessions"]
    assert [(s["title"], s["state"]) for s in listed] == [("Create hello.py", "cancelled")]  # from PostgreSQL
    assert "Traceback" not in a.output() + b.output()

    # the conversation goes on, from B this time
    with httpx.stream("POST", f"{b.url}/v1/sessions/{sid}/messages", json={"text": "/status"},
                      headers={**AUTH, "Accept": "text/event-stream"}, timeout=60) as r:
        after = read_sse(r)
    assert after[-1]["type"] == "done" and any("Create hello.py" in str(c["data"]) for c in after)
