"""Faults with real processes: a serve process killed mid-turn, Redis restarted, PostgreSQL briefly down."""

from __future__ import annotations

import json
import signal
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from tests.channels.scale.conftest import AUTH, read_sse
from tests.channels.server.conftest import sse_events

SLOW = {"DUCKFLOW_DEMO_DELAY": "0.08"}  # the demo model streams a word every 80 ms: a turn lasts seconds


def _follow(url: str, sid: str, after: int, into: list[dict[str, Any]], *, until_done: bool = True) -> None:
    """Follow a session's chunks into `into`, until done (or the connection drops)."""
    try:
        with httpx.stream("GET", f"{url}/v1/sessions/{sid}/events?after={after}&until_done={str(until_done).lower()}",
                          headers=AUTH, timeout=httpx.Timeout(60, read=60)) as r:
            for ev in sse_events(r.iter_lines()):
                if ev.get("event") == "chunk":
                    into.append(json.loads(ev["data"]))
    except httpx.HTTPError:
        pass  # the process went away


def _wait_for(check: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _stream(url: str, sid: str, text: str) -> list[dict[str, Any]]:
    with httpx.stream("POST", f"{url}/v1/sessions/{sid}/messages", json={"text": text},
                      headers={**AUTH, "Accept": "text/event-stream"}, timeout=90) as r:
        assert r.status_code == 200, r.read()
        return read_sse(r)


def test_a_process_killed_mid_turn_its_session_goes_on_elsewhere_with_no_gap(
        tmp_path: Path, serve: Any, redis_server: Any, database: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    a = serve("a", ws, redis_server.url, database, env_extra=SLOW)
    b = serve("b", ws, redis_server.url, database, env_extra=SLOW)
    sid = httpx.post(a.url + "/v1/sessions", headers=AUTH).json()["session_id"]
    on_a: list[dict[str, Any]] = []
    on_b: list[dict[str, Any]] = []
    followers = [threading.Thread(target=_follow, args=(a.url, sid, 0, on_a)),
                 threading.Thread(target=_follow, args=(b.url, sid, 0, on_b))]
    for t in followers:
        t.start()
    time.sleep(0.5)
    sent = httpx.post(f"{a.url}/v1/sessions/{sid}/messages", json={"text": "make hello.py"}, headers=AUTH)
    assert sent.status_code == 202
    _wait_for(lambda: any(c["type"] == "text_delta" or c["type"] == "reply" for c in on_a) and len(on_a) >= 6)
    assert httpx.get(f"{b.url}/v1/sessions/{sid}", headers=AUTH).json()["busy"] is True
    a.proc.send_signal(signal.SIGKILL)  # mid-turn: its lease expires, B takes the session
    a.proc.wait(10)
    for t in followers:
        t.join(60)
    seqs = [c["seq"] for c in on_b]
    assert seqs == list(range(1, len(on_b) + 1))  # no gap, nothing twice
    assert on_b[-2]["type"] == "error" and on_b[-2]["data"]["code"] == "interrupted"
    assert on_b[-1]["type"] == "done" and on_b[-1]["data"]["ending"] == "interrupted"
    assert on_a == on_b[: len(on_a)]  # what A's follower saw before it dropped is what B's saw
    assert "continue" in on_b[-2]["data"]["message"]

    # A's follower reconnects to B with Last-Event-ID and gets exactly the rest
    with httpx.stream("GET", f"{b.url}/v1/sessions/{sid}/events?until_done=true",
                      headers={**AUTH, "Last-Event-ID": str(on_a[-1]["seq"])}, timeout=30) as r:
        rest = read_sse(r)
    assert on_a + rest == on_b

    # "continue" finishes the task (through the gate: approved on B); the demo model follows only
    # requests it knows, so the person names the task as they continue it
    more = _stream(b.url, sid, "continue making hello.py")
    assert more[0]["seq"] == len(on_b) + 1
    ending = more[-1]["data"]["ending"]
    if ending == "approval":
        job = next(c for c in more if c["type"] == "approval")["data"]["job_id"]
        after = httpx.post(f"{b.url}/v1/approvals/{job}/grant", headers=AUTH, json={}).json()["after"]
        with httpx.stream("GET", f"{b.url}/v1/sessions/{sid}/events?after={after}&until_done=true",
                          headers=AUTH, timeout=90) as r:
            more = read_sse(r)
        ending = more[-1]["data"]["ending"]
    assert (ws / "hello.py").read_text().startswith("def main()")
    assert ending in ("done", "input"), more[-3:]


def test_redis_restarted_mid_turn_a_clear_503_meanwhile_and_no_chunk_lost_or_twice(
        tmp_path: Path, serve: Any, redis_server: Any, database: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {**SLOW, "DUCKFLOW_SERVER_LEASE_S": "8"}  # the outage is shorter than a lease
    a = serve("a", ws, redis_server.url, database, env_extra=env)
    b = serve("b", ws, redis_server.url, database, env_extra=env)
    sid = httpx.post(a.url + "/v1/sessions", headers=AUTH).json()["session_id"]
    on_b: list[dict[str, Any]] = []
    follower = threading.Thread(target=_follow, args=(b.url, sid, 0, on_b))
    follower.start()
    time.sleep(0.5)
    assert httpx.post(f"{a.url}/v1/sessions/{sid}/messages", json={"text": "make hello.py"},
                      headers=AUTH).status_code == 202
    _wait_for(lambda: len(on_b) >= 4)
    redis_server.stop()
    refused = httpx.post(f"{b.url}/v1/sessions/{sid}/messages", json={"text": "hello?"}, headers=AUTH, timeout=30)
    assert refused.status_code == 503
    detail = refused.json()
    assert detail["detail"].startswith("Redis at redis://127.0.0.1:") and "unreachable" in detail["detail"]
    assert "retry" in detail["next"]
    time.sleep(1.0)
    redis_server.start()  # same port, its data back from the append-only file
    follower.join(90)
    assert on_b and on_b[-1]["type"] == "done", on_b[-3:]
    assert [c["seq"] for c in on_b] == list(range(1, len(on_b) + 1))
    with httpx.stream("GET", f"{a.url}/v1/sessions/{sid}/events?after=0&until_done=true", headers=AUTH,
                      timeout=30) as r:
        assert read_sse(r) == on_b  # what is kept is exactly what the follower saw
    # and the server works again without a restart
    assert _stream(b.url, sid, "hello?")[-1]["type"] == "done"


def test_postgresql_briefly_down_a_clear_503_then_it_works_again_without_a_restart(
        tmp_path: Path, serve: Any, redis_server: Any, database: str, pg_server: Any) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    a = serve("a", ws, redis_server.url, database)
    sid = httpx.post(a.url + "/v1/sessions", headers=AUTH).json()["session_id"]
    first = _stream(a.url, sid, "hello?")
    pg_server.stop()
    try:
        for r in (httpx.post(a.url + "/v1/sessions", headers=AUTH, timeout=30),
                  httpx.get(f"{a.url}/v1/sessions/{sid}", headers=AUTH, timeout=30),
                  httpx.post(f"{a.url}/v1/sessions/{sid}/messages", json={"text": "hi"},
                             headers={**AUTH, "Accept": "text/event-stream"}, timeout=30)):
            assert r.status_code == 503, r.text
            assert r.json()["detail"].startswith("PostgreSQL at postgresql://duckflow@127.0.0.1:")
            assert "Traceback" not in r.text
    finally:
        pg_server.start()
    assert "Traceback" not in a.output()
    again = _stream(a.url, sid, "hello?")
    assert again[0]["seq"] == first[-1]["seq"] + 1 and again[-1]["type"] == "done"
    assert httpx.post(a.url + "/v1/sessions", headers=AUTH).status_code == 201
