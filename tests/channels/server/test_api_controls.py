"""Auto-approve, undo, traces and status over the API, driven by a real run of the demo."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx

from tests.channels.server.conftest import sse_events


def _run(srv: Any, sid: str, text: str) -> list[dict[str, Any]]:
    with httpx.stream("POST", f"{srv.url}/v1/sessions/{sid}/messages", json={"text": text},
                      headers={**srv.auth, "Accept": "text/event-stream"}, timeout=30) as r:
        return [json.loads(e["data"]) for e in sse_events(r.iter_lines()) if e.get("event") == "chunk"]


def test_auto_approve_lets_the_write_through_then_undo_restores_and_off_is_immediate(live: Any) -> None:
    srv = live()
    assert httpx.get(srv.url + "/v1/autoapprove", headers=srv.auth).json()["enabled"] is False
    on = httpx.post(srv.url + "/v1/autoapprove", headers=srv.auth,
                    json={"paths": ["*"], "tools": ["*"], "task_types": ["*"], "ttl_min": 5, "by": "test"})
    assert on.status_code == 200 and on.json()["enabled"] and on.json()["scope"]["paths"] == ["*"]
    assert 4.5 < on.json()["minutes_left"] <= 5
    assert httpx.post(srv.url + "/v1/autoapprove", headers=srv.auth, json={"ttl_min": -1}).status_code == 422
    sid = httpx.post(srv.url + "/v1/sessions", headers=srv.auth).json()["session_id"]
    chunks = _run(srv, sid, "make hello.py")
    assert not [c for c in chunks if c["type"] == "approval" and c["data"]["phase"] == "request"]
    assert (srv.workspace / "hello.py").exists()  # auto-approved within the scope
    status = httpx.get(srv.url + "/v1/status", headers=srv.auth).json()
    assert status["auto_approve"]["enabled"] and status["pending_approvals"] == 0

    cps = httpx.get(srv.url + "/v1/undo", headers=srv.auth).json()["checkpoints"]
    assert cps and "hello.py" in cps[0]["paths"]
    undone = httpx.post(srv.url + "/v1/undo", headers=srv.auth, json={})
    assert undone.status_code == 200 and "hello.py" in undone.json()["restored"]
    assert not (srv.workspace / "hello.py").exists()

    off = httpx.delete(srv.url + "/v1/autoapprove", headers=srv.auth).json()
    assert off == {"enabled": False, "switched_off": 1}
    sid2 = httpx.post(srv.url + "/v1/sessions", headers=srv.auth).json()["session_id"]
    chunks = _run(srv, sid2, "make hello.py")
    assert [c for c in chunks if c["type"] == "approval"]  # off at once: the next write waits again

    deadline = time.monotonic() + 10
    while not (records := httpx.get(srv.url + f"/v1/traces?session={sid}", headers=srv.auth).json()["records"]):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert all(r["session"] == sid for r in records) and {"agent_start", "tool_end"} & {r["event"] for r in records}
