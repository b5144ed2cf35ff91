"""SSE over real HTTP: one event per chunk with id = seq, resume with Last-Event-ID, heartbeats, approvals."""

from __future__ import annotations

import json
import stat
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.channels.server.conftest import sse_events


def _new_session(srv: Any) -> str:
    r = httpx.post(srv.url + "/v1/sessions", headers=srv.auth)
    assert r.status_code == 201
    return str(r.json()["session_id"])


def _chunks(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [json.loads(e["data"]) | {"_id": int(e["id"])} for e in events if e.get("event") == "chunk"]


def test_a_message_streams_its_run_and_an_approval_from_the_api_writes_the_file(live: Any) -> None:
    srv = live()
    sid = _new_session(srv)
    with httpx.stream("POST", f"{srv.url}/v1/sessions/{sid}/messages", json={"text": "make hello.py"},
                      headers={**srv.auth, "Accept": "text/event-stream"}, timeout=30) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        chunks = _chunks(list(sse_events(r.iter_lines())))
    seqs = [c["seq"] for c in chunks]
    assert seqs == list(range(1, len(seqs) + 1)) and all(c["_id"] == c["seq"] for c in chunks)
    state_dir = Path(srv.app.state.settings.state_dir)
    assert stat.S_IMODE(state_dir.stat().st_mode) == 0o700  # conversations are this user's only
    types = [c["type"] for c in chunks]
    assert chunks[0]["type"] == "notice" and chunks[0]["data"]["code"] == "route"
    assert chunks[0]["data"]["details"]["primary_route"]  # every message went through the router
    assert types[-1] == "done"
    assert {"decision", "plan", "tool_call", "tool_response", "reply", "approval", "state"} <= set(types)
    approval = next(c for c in chunks if c["type"] == "approval")["data"]
    assert approval["phase"] == "request"
    assert approval["request"]["diff_preview"] and "hello.py" in approval["request"]["diff_preview"]
    assert chunks[-1]["data"]["ending"] == "approval"
    assert not (srv.workspace / "hello.py").exists()

    pending = httpx.get(srv.url + "/v1/approvals", headers=srv.auth).json()["jobs"]
    assert [j["job_id"] for j in pending] == [approval["job_id"]]
    shown = httpx.get(f"{srv.url}/v1/approvals/{approval['job_id']}", headers=srv.auth).json()
    assert "hello.py" in shown["rendered"]
    r = httpx.post(f"{srv.url}/v1/approvals/{approval['job_id']}/grant", headers=srv.auth, json={"by": "tester"})
    assert r.status_code == 200 and r.json()["session_id"] == sid
    after = r.json()["after"]
    with httpx.stream("GET", f"{srv.url}/v1/sessions/{sid}/events?after={after}&until_done=true",
                      headers=srv.auth, timeout=30) as s:
        more = _chunks(list(sse_events(s.iter_lines())))
    assert [c["seq"] for c in more] == list(range(after + 1, after + 1 + len(more)))
    answer = next(c for c in more if c["type"] == "approval")["data"]
    assert answer["phase"] == "answer" and answer["granted"] and answer["by"] == "web:tester"
    assert (srv.workspace / "hello.py").read_text().startswith("def main()")
    job = httpx.get(f"{srv.url}/v1/approvals/{approval['job_id']}", headers=srv.auth).json()
    assert job["status"] == "granted"
    assert httpx.post(f"{srv.url}/v1/approvals/{approval['job_id']}/grant", headers=srv.auth).status_code == 409


def test_a_dropped_stream_resumes_with_exactly_the_missed_chunks(live: Any) -> None:
    srv = live()
    sid = _new_session(srv)
    got: list[dict[str, Any]] = []
    with httpx.stream("POST", f"{srv.url}/v1/sessions/{sid}/messages", json={"text": "make hello.py"},
                      headers={**srv.auth, "Accept": "text/event-stream"}, timeout=30) as r:
        for ev in sse_events(r.iter_lines()):
            if ev.get("event") == "chunk":
                got.append(json.loads(ev["data"]))
            if len(got) == 4:
                break  # the connection drops here
    last = got[-1]["seq"]
    time.sleep(0.3)  # the run goes on meanwhile
    with httpx.stream("GET", f"{srv.url}/v1/sessions/{sid}/events?until_done=true",
                      headers={**srv.auth, "Last-Event-ID": str(last)}, timeout=30) as r:
        rest = _chunks(list(sse_events(r.iter_lines())))
    seqs = [c["seq"] for c in got] + [c["seq"] for c in rest]
    assert seqs == list(range(1, len(seqs) + 1))  # no gap, no duplicate
    assert rest[-1]["type"] == "done"
    whole = httpx.get(f"{srv.url}/v1/sessions/{sid}/chunks", headers=srv.auth).json()["chunks"]
    assert [c["seq"] for c in whole] == seqs


def test_idle_streams_get_heartbeats_and_streams_need_the_token(live: Any) -> None:
    srv = live(heartbeat_s=0.2)
    sid = _new_session(srv)
    assert httpx.get(f"{srv.url}/v1/sessions/{sid}/events").status_code == 401
    beats = 0
    with httpx.stream("GET", f"{srv.url}/v1/sessions/{sid}/events", headers=srv.auth, timeout=10) as r:
        for ev in sse_events(r.iter_lines()):
            if "comment" in ev:
                beats += 1
            if beats >= 2:
                break
    assert beats >= 2
    assert httpx.get(f"{srv.url}/v1/sessions/nope/events", headers=srv.auth).status_code == 404


def test_a_message_beyond_the_running_limit_is_routed_at_once_and_told_it_waits(
        live: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from duckflow.channels.conversation import Conversation
    from duckflow.channels.runner import SessionRunner

    guard = Conversation._guard

    async def slow_start(self: Conversation, stream: Any) -> Any:  # each task holds its slot a moment longer
        await asyncio.sleep(0.8)
        async for c in guard(self, stream):
            yield c

    monkeypatch.setattr(Conversation, "_guard", slow_start)
    srv = live(runner=None, max_running=1)
    assert isinstance(srv.app.state.runner, SessionRunner) and srv.app.state.runner._slots._value == 1
    ws = srv.workspace
    srv = live(runner=SessionRunner(ws, model_name="scripted:demo", max_running=1))
    a, b = _new_session(srv), _new_session(srv)
    for sid in (a, b):
        assert httpx.post(f"{srv.url}/v1/sessions/{sid}/messages", headers=srv.auth,
                          json={"text": "make hello.py"}).status_code == 202
    streams = {}
    for sid in (a, b):
        with httpx.stream("GET", f"{srv.url}/v1/sessions/{sid}/events?until_done=true", headers=srv.auth,
                          timeout=30) as r:
            streams[sid] = _chunks(list(sse_events(r.iter_lines())))
    codes = {sid: [c["data"].get("code") for c in chunks if c["type"] == "notice"] for sid, chunks in streams.items()}
    assert "queued" in codes[a] + codes[b]  # one of the two waited for the single slot
    assert all(chunks[0]["data"]["code"] == "route" for chunks in streams.values())


def test_the_streamed_message_checks_token_body_and_session_like_every_endpoint(live: Any) -> None:
    srv = live(max_body_bytes=5000)
    sid = _new_session(srv)
    sse = {"Accept": "text/event-stream"}
    url = f"{srv.url}/v1/sessions/{sid}/messages"
    assert httpx.post(url, headers=sse, json={"text": "hi"}).status_code == 401
    assert httpx.post(url, headers={**sse, "Authorization": "Bearer " + "x" * 30}, json={"text": "hi"}).status_code == 401
    auth = {**sse, **srv.auth}
    assert httpx.post(url, headers=auth, content=b"{not json").status_code == 400
    assert httpx.post(url, headers=auth, json={"text": ""}).status_code == 422
    assert httpx.post(url, headers=auth, json=["text"]).status_code == 422
    assert httpx.post(url, headers=auth, json={"text": "x" * 6000}).status_code == 413
    assert httpx.post(f"{srv.url}/v1/sessions/nope/messages", headers=auth, json={"text": "hi"}).status_code == 404
    assert httpx.get(f"{srv.url}/v1/sessions/{sid}", headers=srv.auth).json()["last_seq"] == 0  # nothing ran


def test_local_mode_is_the_routers_answer_is_remembered_and_logged(live: Any) -> None:
    import os

    srv = live()
    sid = _new_session(srv)
    with httpx.stream("POST", f"{srv.url}/v1/sessions/{sid}/messages", json={"text": "/local"},
                      headers={**srv.auth, "Accept": "text/event-stream"}, timeout=30) as r:
        chunks = _chunks(list(sse_events(r.iter_lines())))
    assert [c["type"] for c in chunks] == ["notice", "notice", "done"]  # the router answered, no model ran
    assert chunks[0]["data"]["details"]["flags"]["local_only"] is True
    with httpx.stream("POST", f"{srv.url}/v1/sessions/{sid}/messages", json={"text": "/code write hello.py"},
                      headers={**srv.auth, "Accept": "text/event-stream"}, timeout=30) as r:
        chunks = _chunks(list(sse_events(r.iter_lines())))
    assert chunks[0]["data"]["details"]["flags"]["local_only"] is True  # the session's mode was kept
    assert chunks[-1]["data"]["ending"] == "input" and not (srv.workspace / "hello.py").exists()
    events = Path(os.environ["DUCKFLOW_HOME"]) / "events" / "events.jsonl"

    def decisions() -> list[str]:  # written by the event thread, masked, in order
        logged = [json.loads(line) for line in events.read_text().splitlines()] if events.exists() else []
        return [e["channel"] for e in logged if e.get("type") == "router.decision" and e.get("session_id") == sid]

    deadline = time.monotonic() + 10
    while len(decisions()) < 2:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert decisions() == ["http", "http"]


def test_a_plan_route_runs_the_worker_when_one_is_configured_and_joins_the_conversation(live: Any) -> None:
    from duckflow.channels.runner import SessionRunner
    from duckflow.llm.scripted import ScriptedModel, reply

    out = {"result": "1. freeze 2. tag 3. publish", "needs_next_loop": False, "why": "a release plan",
           "next_actions": [], "questions_for_user": [], "confidence": 0.9, "risk": "low"}
    worker = ScriptedModel([reply(json.dumps(out))], name="worker-test")
    srv = live()
    runner = SessionRunner(srv.workspace, model_name="scripted:demo", role_models={"worker": worker})
    srv = live(runner=runner)
    sid = _new_session(srv)
    with httpx.stream("POST", f"{srv.url}/v1/sessions/{sid}/messages", json={"text": "/plan the release"},
                      headers={**srv.auth, "Accept": "text/event-stream"}, timeout=30) as r:
        chunks = _chunks(list(sse_events(r.iter_lines())))
    assert chunks[0]["data"]["details"]["primary_route"] == "PLAN"
    # the Worker answered (and says with which model); no companion turn
    assert [(c["type"], c["data"].get("code")) for c in chunks[1:]] == [
        ("notice", "answered_by"), ("reply", None), ("notice", "turn_end"), ("done", None)]
    assert chunks[3]["data"]["message"] == "answered by scripted:worker-test"
    assert "freeze" in chunks[2]["data"]["text"] and chunks[2]["agent"] == "worker"
    state = httpx.get(f"{srv.url}/v1/sessions/{sid}", headers=srv.auth).json()
    assert "freeze" in json.dumps(state)  # the Worker's answer is in the companion's exchanges


def test_a_coder_job_waits_for_the_page_and_the_worker_applies_it_on_yes(live: Any) -> None:
    from duckflow.channels.runner import SessionRunner
    from duckflow.llm.scripted import ScriptedModel, reply

    patch = "--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1,2 @@\n+first line\n+second line\n"
    out = {"job_id": "job-1", "plan": "add notes.txt", "patch": patch, "risk": "low: one new file",
           "need_approval": True}
    coder = ScriptedModel([reply(json.dumps(out))], name="coder-test")
    srv = live()
    srv = live(runner=SessionRunner(srv.workspace, model_name="scripted:demo", role_models={"coder1": coder}))
    sid = _new_session(srv)
    with httpx.stream("POST", f"{srv.url}/v1/sessions/{sid}/messages", json={"text": "/code1 add notes.txt"},
                      headers={**srv.auth, "Accept": "text/event-stream"}, timeout=30) as r:
        chunks = _chunks(list(sse_events(r.iter_lines())))
    approvals = [c for c in chunks if c["type"] == "approval"]
    assert approvals, [(c["type"], c["data"]) for c in chunks]
    approval = approvals[0]["data"]
    assert chunks[-1]["data"]["ending"] == "approval" and "+first line" in approval["request"]["diff_preview"]
    assert not (srv.workspace / "notes.txt").exists()
    r = httpx.post(f"{srv.url}/v1/approvals/{approval['job_id']}/grant", headers=srv.auth, json={"by": "t"})
    assert r.status_code == 200 and r.json()["session_id"] == sid
    with httpx.stream("GET", f"{srv.url}/v1/sessions/{sid}/events?after={r.json()['after']}&until_done=true",
                      headers=srv.auth, timeout=30) as s:
        more = _chunks(list(sse_events(s.iter_lines())))
    assert [c["type"] for c in more] == ["approval", "reply", "done"]
    assert (srv.workspace / "notes.txt").read_text() == "first line\nsecond line\n"


class _NestedDoneRunner:
    """A runner whose run carries a tool call with `{"type": "done"}` as its arguments (the model
    chooses them) before the run's own `done`."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace

    def exists(self, sid: str) -> bool:
        return sid == "s1"

    def belongs_here(self, sid: str) -> bool:
        return True

    async def run_message(self, sid: str, text: str, channel: str, images: Any = None) -> Any:
        yield {"agent": "router", "type": "notice", "data": {"code": "route", "message": "chat"}}
        yield {"agent": "companion", "type": "tool_call", "data": {"name": "note", "arguments": {"type": "done"}}}
        yield {"agent": "companion", "type": "reply", "data": {"text": "still here"}}
        yield {"agent": "companion", "type": "done", "data": {"ending": "input", "text": "still here"}}

    def close(self) -> None:
        pass


def test_a_stream_ends_at_the_runs_done_not_at_a_done_nested_in_a_chunk(live: Any, tmp_path: Path) -> None:
    srv = live(runner=_NestedDoneRunner(tmp_path))
    with httpx.stream("POST", f"{srv.url}/v1/sessions/s1/messages", json={"text": "hi"},
                      headers={**srv.auth, "Accept": "text/event-stream"}, timeout=30) as r:
        chunks = _chunks(list(sse_events(r.iter_lines())))
    assert [c["type"] for c in chunks] == ["notice", "tool_call", "reply", "done"]
    assert chunks[1]["data"]["arguments"] == {"type": "done"} and chunks[-1]["data"]["ending"] == "input"
