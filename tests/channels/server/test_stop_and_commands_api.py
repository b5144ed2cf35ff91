"""Stop and the chat's own commands over the API, driven by a real run of the demo: Stop cancels the running
turn at once (the stream ends `cancelled`, the state kept, the next message works); `/undo` sent as a
message never reaches the model nor names the conversation; an unknown /word is refused."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest

from tests.channels.server.conftest import sse_events, wait_until


def _chunks(srv: Any, sid: str) -> list[dict[str, Any]]:
    return list(httpx.get(f"{srv.url}/v1/sessions/{sid}/chunks", headers=srv.auth).json()["chunks"])


def _send(srv: Any, sid: str, text: str) -> list[dict[str, Any]]:
    with httpx.stream("POST", f"{srv.url}/v1/sessions/{sid}/messages", json={"text": text},
                      headers={**srv.auth, "Accept": "text/event-stream"}, timeout=30) as r:
        return [json.loads(e["data"]) for e in sse_events(r.iter_lines()) if e.get("event") == "chunk"]


@pytest.mark.parametrize("how", ["button", "/cancel"])
def test_stop_cancels_the_running_turn_at_once_and_keeps_the_state(live: Any, monkeypatch: pytest.MonkeyPatch,
                                                                   how: str) -> None:
    monkeypatch.setenv("DUCKFLOW_DEMO_DELAY", "0.25")  # the demo model writes a word every 0.25 s
    srv = live()
    sid = httpx.post(srv.url + "/v1/sessions", headers=srv.auth).json()["session_id"]
    idle = httpx.post(f"{srv.url}/v1/sessions/{sid}/stop", headers=srv.auth).json()
    assert idle["stopped"] is False and "nothing is running" in idle["detail"]
    r = httpx.post(f"{srv.url}/v1/sessions/{sid}/messages", headers=srv.auth, json={"text": "Create hello.py"})
    assert r.status_code == 202
    wait_until(lambda: any(c["type"] == "delta" for c in _chunks(srv, sid)))  # the model is writing
    for text, said in (("/status", "Working on it now."), ("/undo", "/undo waits until the task stops (Stop ends it).")):
        r = httpx.post(f"{srv.url}/v1/sessions/{sid}/messages", headers=srv.auth, json={"text": text})
        assert r.status_code == 202  # answered at once, as the terminal does, not queued behind the turn
        answers = [c["data"]["text"] for c in _chunks(srv, sid) if c["type"] == "reply" and c["agent"] == "command"]
        assert said in answers[-1]
    assert not [c for c in _chunks(srv, sid) if c["type"] == "done"]  # the turn still runs
    asked = time.monotonic()
    if how == "button":
        stop = httpx.post(f"{srv.url}/v1/sessions/{sid}/stop", headers=srv.auth)
        assert stop.status_code == 200 and stop.json()["stopped"] is True
    else:  # /cancel typed, as in the terminal
        assert httpx.post(f"{srv.url}/v1/sessions/{sid}/messages", headers=srv.auth,
                          json={"text": "/cancel"}).status_code == 202
    done = wait_until(lambda: [c for c in _chunks(srv, sid) if c["type"] == "done"], timeout=5)
    assert time.monotonic() - asked < 2  # at once, not after the model's 0.25 s per word answer
    assert done[-1]["data"]["ending"] == "cancelled"
    said = [c for c in _chunks(srv, sid) if c["type"] == "notice" and c["data"]["code"] == "cancelled"]
    assert len(said) == 1 and said[0]["data"]["message"].startswith("Cancelled — nothing was changed.")
    assert done[-1]["data"]["text"] == said[0]["data"]["message"]
    status = httpx.get(f"{srv.url}/v1/sessions/{sid}", headers=srv.auth).json()
    assert status["busy"] is False and status["task"] == "Create hello.py"  # the state is kept
    assert status["status"] == "REQUIRES_USER_INPUT"
    listed = next(s for s in httpx.get(srv.url + "/v1/sessions", headers=srv.auth).json()["sessions"]
                  if s["session_id"] == sid)
    assert listed["state"] == "cancelled"  # not "waiting for your answer": nothing was asked
    assert not (srv.workspace / "hello.py").exists()
    monkeypatch.setenv("DUCKFLOW_DEMO_DELAY", "0")
    after = _send(srv, sid, "/status")  # the conversation goes on
    assert after[-1]["type"] == "done" and "Create hello.py" in after[1]["data"]["text"]
    assert _send(srv, sid, "/cancel")[1]["data"]["text"] == "Nothing is running."


def test_undo_and_unknown_commands_never_reach_the_model_nor_name_the_conversation(live: Any) -> None:
    srv = live()
    sid = httpx.post(srv.url + "/v1/sessions", headers=srv.auth).json()["session_id"]
    undo = _send(srv, sid, "/undo")
    assert [c["type"] for c in undo] == ["notice", "reply", "done"]
    assert undo[0]["data"]["code"] == "command" and "nothing to undo" in undo[1]["data"]["text"]
    odd = _send(srv, sid, "/frobnicate")
    assert "is not a command, so nothing was sent" in odd[1]["data"]["text"]
    listed = httpx.get(srv.url + "/v1/sessions", headers=srv.auth).json()["sessions"]
    mine = next(s for s in listed if s["session_id"] == sid)
    assert mine["title"] == "New conversation" and mine["task"] == ""
    assert not any(c["type"] in ("delta", "decision", "tool_call") for c in _chunks(srv, sid))

    # a change made and approved, then /undo and /redo from the page's message box
    made = _send(srv, sid, "Create hello.py that prints a greeting")
    job = next(c["data"]["job_id"] for c in made if c["type"] == "approval")
    httpx.post(f"{srv.url}/v1/approvals/{job}/grant", headers=srv.auth, json={})
    wait_until(lambda: (srv.workspace / "hello.py").exists())
    wait_until(lambda: not httpx.get(f"{srv.url}/v1/sessions/{sid}", headers=srv.auth).json()["busy"])
    undone = _send(srv, sid, "/undo")
    assert undone[0]["data"]["details"]["ok"] is True and not (srv.workspace / "hello.py").exists()
    redone = _send(srv, sid, "/redo")
    assert redone[0]["data"]["details"]["ok"] is True and (srv.workspace / "hello.py").exists()


def test_a_turn_ends_with_one_quiet_line_of_time_and_tokens(live: Any) -> None:
    srv = live()
    sid = httpx.post(srv.url + "/v1/sessions", headers=srv.auth).json()["session_id"]
    chunks = _send(srv, sid, "What can you do?")
    ends = [c for c in chunks if c["type"] == "notice" and c["data"]["code"] == "turn_end"]
    assert len(ends) == 1 and chunks[-2] is ends[0] and chunks[-1]["type"] == "done"
    assert " s · " in ends[0]["data"]["message"] and "tokens in" in ends[0]["data"]["message"]
    said = _send(srv, sid, "/status")  # no model answered: nothing to add up
    assert not [c for c in said if c["type"] == "notice" and c["data"]["code"] == "turn_end"]


def test_stop_after_a_write_keeps_the_file_and_its_checkpoint(live: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DUCKFLOW_DEMO_DELAY", "0.2")
    srv = live()
    on = httpx.post(srv.url + "/v1/autoapprove", headers=srv.auth,
                    json={"paths": ["*"], "tools": ["*"], "task_types": ["*"], "ttl_min": 5, "by": "test"})
    assert on.status_code == 200
    sid = httpx.post(srv.url + "/v1/sessions", headers=srv.auth).json()["session_id"]
    httpx.post(f"{srv.url}/v1/sessions/{sid}/messages", headers=srv.auth, json={"text": "Create hello.py"})
    wait_until(lambda: (srv.workspace / "hello.py").exists(), timeout=60)  # written (auto-approved) ...
    assert not [c for c in _chunks(srv, sid) if c["type"] == "done"]  # ... and the turn goes on
    assert httpx.post(f"{srv.url}/v1/sessions/{sid}/stop", headers=srv.auth).json()["stopped"] is True
    done = wait_until(lambda: [c for c in _chunks(srv, sid) if c["type"] == "done"], timeout=5)
    assert done[-1]["data"]["ending"] == "cancelled"
    assert (srv.workspace / "hello.py").exists()  # what was done so far is kept, and said so truly
    assert done[-1]["data"]["text"].startswith("Cancelled — 1 file changed so far (hello.py); /undo to take it back.")
    monkeypatch.setenv("DUCKFLOW_DEMO_DELAY", "0")
    undone = _send(srv, sid, "/undo")  # and its checkpoint: /undo takes it back
    assert undone[0]["data"]["details"]["ok"] is True and not (srv.workspace / "hello.py").exists()
