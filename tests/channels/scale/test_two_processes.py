"""Two real `duckflow serve` processes, separate DUCKFLOW_HOMEs, one Redis and one PostgreSQL:
a session, its messages, its approvals and its chunk log are shared with no gap."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import httpx

from tests.channels.scale.conftest import AUTH, read_sse


def test_two_processes_share_a_session_its_messages_approvals_and_chunks(
        tmp_path: Path, serve: Any, redis_server: Any, database: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    a = serve("a", ws, redis_server.url, database)
    b = serve("b", ws, redis_server.url, database)

    sid = httpx.post(a.url + "/v1/sessions", headers=AUTH, timeout=10).json()["session_id"]
    assert httpx.get(f"{b.url}/v1/sessions/{sid}", headers=AUTH, timeout=10).status_code == 200  # known to B

    # A follows the session; the message is sent to B and streamed by B too
    followed: list[dict[str, Any]] = []

    def follow_on_a() -> None:
        with httpx.stream("GET", f"{a.url}/v1/sessions/{sid}/events?after=0&until_done=true", headers=AUTH,
                          timeout=60) as r:
            followed.extend(read_sse(r))

    follower = threading.Thread(target=follow_on_a)
    follower.start()
    with httpx.stream("POST", f"{b.url}/v1/sessions/{sid}/messages", json={"text": "make hello.py"},
                      headers={**AUTH, "Accept": "text/event-stream"}, timeout=60) as r:
        assert r.status_code == 200
        on_b = read_sse(r)
    follower.join(60)
    assert on_b and on_b[-1]["type"] == "done" and on_b[-1]["data"]["ending"] == "approval"
    assert [c["seq"] for c in on_b] == list(range(1, len(on_b) + 1))  # no gap, from the first
    assert followed == on_b  # A saw exactly what B streamed
    job = next(c for c in on_b if c["type"] == "approval")["data"]["job_id"]

    # the approval asked through B is pending on A and granted there; the task goes on
    assert [j["job_id"] for j in httpx.get(a.url + "/v1/approvals", headers=AUTH).json()["jobs"]] == [job]
    granted = httpx.post(f"{a.url}/v1/approvals/{job}/grant", headers=AUTH, json={"by": "tester"}, timeout=10)
    assert granted.status_code == 200 and granted.json()["session_id"] == sid
    after = granted.json()["after"]
    assert after == len(on_b)
    with httpx.stream("GET", f"{b.url}/v1/sessions/{sid}/events?after={after}&until_done=true", headers=AUTH,
                      timeout=60) as r:
        more = read_sse(r)
    assert [c["seq"] for c in more] == list(range(after + 1, after + 1 + len(more)))
    answer = next(c for c in more if c["type"] == "approval")["data"]
    assert answer["phase"] == "answer" and answer["granted"] and answer["by"] == "web:tester"
    assert (ws / "hello.py").read_text().startswith("def main()")
    assert httpx.get(f"{b.url}/v1/approvals/{job}", headers=AUTH).json()["status"] == "granted"

    # Last-Event-ID resumes exactly, from either process
    for srv in (a, b):
        with httpx.stream("GET", f"{srv.url}/v1/sessions/{sid}/events?until_done=true",
                          headers={**AUTH, "Last-Event-ID": "3"}, timeout=60) as r:
            resumed = read_sse(r)
        assert resumed == (on_b + more)[3:len(on_b)]  # up to the first done after seq 3
    import redis

    assert int(redis.Redis.from_url(redis_server.url).get(f"duckflow:tokens:{sid}") or 0) > 0  # TokenGuard's total
    listed = httpx.get(a.url + "/v1/sessions", headers=AUTH).json()["sessions"]
    assert [s["session_id"] for s in listed] == [sid]
    for srv in (a, b):  # nothing of it in either process's SQLite files
        assert not (srv.home / "server" / "chunks.db").exists()
        assert "shared with other processes: Redis" in srv.output()


def _stream(url: str, sid: str, text: str) -> list[dict[str, Any]]:
    with httpx.stream("POST", f"{url}/v1/sessions/{sid}/messages", json={"text": text},
                      headers={**AUTH, "Accept": "text/event-stream"}, timeout=60) as r:
        assert r.status_code == 200
        return read_sse(r)


def test_the_orchestra_flags_and_event_log_are_shared(
        tmp_path: Path, serve: Any, redis_server: Any, database: str) -> None:
    import psycopg

    ws = tmp_path / "ws"
    ws.mkdir()
    a = serve("a", ws, redis_server.url, database)
    b = serve("b", ws, redis_server.url, database)
    sid = httpx.post(a.url + "/v1/sessions", headers=AUTH).json()["session_id"]
    first = _stream(a.url, sid, "/local")
    assert first[-1]["type"] == "done"
    routed = _stream(b.url, sid, "hello? my key is AKIAIOSFODNN7EXAMPLE")[0]
    assert routed["data"]["code"] == "route" and routed["data"]["details"]["flags"]["local_only"] is True
    import time

    deadline = time.monotonic() + 20  # the event log is written behind, by a thread, as on one process
    with psycopg.connect(database, autocommit=True) as conn:
        while True:
            rows = conn.execute("SELECT type, body FROM events WHERE session_id=%s ORDER BY id", (sid,)).fetchall()
            if [t for t, _ in rows].count("router.decision") >= 2 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        version = conn.execute("SELECT max(version) FROM schema_version").fetchone()
    assert [t for t, _ in rows].count("router.decision") == 2
    assert version is not None and version[0] >= 2
    for srv in (a, b):  # nothing of it in either process's own files
        assert not (srv.home / "events" / "events.jsonl").exists()


def test_a_line_event_redelivered_to_the_other_process_runs_once(
        tmp_path: Path, serve: Any, redis_server: Any, database: str, fake_api: Any) -> None:
    import json
    import time

    from tests.channels.server.test_webhook_signatures import LINE, line_headers

    api = fake_api()
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {"LINE_CHANNEL_SECRET": LINE, "LINE_CHANNEL_ACCESS_TOKEN": "t", "LINE_API_URL": api.url,
           "LINE_DATA_API_URL": api.url, "LINE_ALLOWED_USERS": "U1"}
    a = serve("a", ws, redis_server.url, database, env_extra=env)
    b = serve("b", ws, redis_server.url, database, env_extra=env)
    event = {"type": "message", "webhookEventId": "e-twice", "replyToken": "rt-twice",
             "timestamp": int(time.time() * 1000), "source": {"type": "user", "userId": "U1"},
             "message": {"id": "m1", "type": "text", "text": "hi"}}
    body = json.dumps({"destination": "Ubot", "events": [event]}).encode()
    for srv in (a, b, a):  # LINE's redelivery, once to each process, and a replay
        assert httpx.post(srv.url + "/line/webhook", content=body, headers=line_headers(body),
                          timeout=10).status_code == 200
    api.wait_for("/v2/bot/message/reply", timeout=30)
    time.sleep(1.0)
    assert [c["body"]["replyToken"] for c in api.of("/v2/bot/message/reply")] == ["rt-twice"]
    assert not api.of("/v2/bot/message/push")
