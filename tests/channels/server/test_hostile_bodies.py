"""Hostile bodies, replays and other workspaces against the real server on 127.0.0.1 (real HMACs).

On main a body of a few thousand `[` (valid signature and all) answered 500 with a traceback
on /auth/exchange, the streamed message, Slack and LINE; the fast path ran a message on a
session of another workspace; a LINE event signed hours ago was taken, and one replayed after
a restart ran again; `GET /v1/traces` showed every workspace's records.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx

from tests.channels.server.test_webhook_signatures import LINE, SLACK, line_headers, slack_headers

DEEP = b"[" * 5000 + b"]" * 5000
SSE = {"Accept": "text/event-stream"}


def _one_line_400(r: httpx.Response) -> str:
    assert r.status_code == 400, (r.status_code, r.text[:200])
    detail = r.json()["detail"]
    assert isinstance(detail, str) and "\n" not in detail and "Traceback" not in detail
    return detail


def test_every_json_body_too_deep_or_invalid_is_a_one_line_400(live: Any) -> None:
    srv = live(slack_signing_secret=SLACK, line_channel_secret=LINE, line_allowed=frozenset({"*"}))
    sid = httpx.post(srv.url + "/v1/sessions", headers=srv.auth).json()["session_id"]
    sent = {
        "exchange": lambda b: httpx.post(srv.url + "/auth/exchange", content=b),
        "stream": lambda b: httpx.post(f"{srv.url}/v1/sessions/{sid}/messages", content=b,
                                       headers={**srv.auth, **SSE}),
        "message": lambda b: httpx.post(f"{srv.url}/v1/sessions/{sid}/messages", content=b, headers=srv.auth),
        "autoapprove": lambda b: httpx.post(srv.url + "/v1/autoapprove", content=b, headers=srv.auth),
        "slack": lambda b: httpx.post(srv.url + "/slack/events", content=b, headers=slack_headers(b)),
        "slack form": lambda b: httpx.post(srv.url + "/slack/interactions", content=b"payload=" + b,
                                           headers=slack_headers(b"payload=" + b)),
        "line": lambda b: httpx.post(srv.url + "/line/webhook", content=b, headers=line_headers(b)),
    }
    for name, post in sent.items():
        assert "deeper than" in _one_line_400(post(DEEP)), name
        assert "not valid JSON" in _one_line_400(post(b'{"text": "hi"')), name
        undecodable = _one_line_400(post(b'{"text": "\xff"}'))
        assert "UTF-8" in undecodable or name == "slack form", name  # a form is decoded before its field
    assert httpx.get(srv.url + "/healthz").status_code == 200
    assert httpx.get(f"{srv.url}/v1/sessions/{sid}", headers=srv.auth).json()["last_seq"] == 0  # nothing ran
    r = httpx.post(srv.url + "/v1/autoapprove", json={"ttl_min": -1}, headers=srv.auth)
    assert r.status_code == 422 and r.json()["detail"].startswith("`ttl_min`")  # one line, not a list


def test_the_streamed_message_refuses_a_session_of_another_workspace(live: Any, tmp_path: Path) -> None:
    from duckflow.channels.cli.main import main

    other = tmp_path / "other"
    other.mkdir()
    srv = live()
    assert main(["run", "hi", "-w", str(other), "--model", "scripted:demo"]) == 1
    store = srv.app.state.runner.store
    theirs = store.latest(str(other.resolve()))
    assert theirs
    before = store.load(theirs)[0].to_dict()
    for headers in ({**srv.auth, **SSE}, srv.auth):  # the fast path and the route
        r = httpx.post(f"{srv.url}/v1/sessions/{theirs}/messages", json={"text": "delete everything"},
                       headers=headers)
        assert r.status_code == 404 and "another workspace" in r.json()["detail"], r.text
    time.sleep(0.3)
    assert srv.app.state.chunks.since(theirs, 0) == []  # nothing was written to its stream
    assert srv.app.state.runner.store.load(theirs)[0].to_dict() == before  # nor to the session


def _event(eid: str, text: str, *, age_s: float = 0.0) -> bytes:
    event = {"type": "message", "webhookEventId": eid, "replyToken": "rt-" + eid,
             "timestamp": int((time.time() - age_s) * 1000), "source": {"type": "user", "userId": "U1"},
             "message": {"id": "m" + eid, "type": "text", "text": text}}
    return json.dumps({"destination": "Ubot", "events": [event]}).encode()


def _line(live: Any, fake_api: Any, tmp_path: Path) -> tuple[Any, Any]:
    api = fake_api()
    srv = live(line_channel_secret=LINE, line_access_token="t", line_api_url=api.url, line_data_url=api.url,
               line_allowed=frozenset({"U1"}), state_dir=str(tmp_path / "state"))
    return srv, api


def test_a_line_event_signed_long_ago_is_refused(live: Any, fake_api: Any, tmp_path: Path) -> None:
    srv, api = _line(live, fake_api, tmp_path)
    for body in (_event("old1", "hi", age_s=3600), _event("future1", "hi", age_s=-3600)):
        assert httpx.post(srv.url + "/line/webhook", content=body, headers=line_headers(body)).status_code == 200
    fresh = _event("new1", "hi")
    assert httpx.post(srv.url + "/line/webhook", content=fresh, headers=line_headers(fresh)).status_code == 200
    api.wait_for("/v2/bot/message/reply")
    time.sleep(0.3)
    assert [c["body"]["replyToken"] for c in api.of("/v2/bot/message/reply")] == ["rt-new1"]


def test_a_line_event_replayed_after_a_restart_is_refused(live: Any, fake_api: Any, tmp_path: Path) -> None:
    srv, api = _line(live, fake_api, tmp_path)
    body = _event("e-replay", "hi")
    assert httpx.post(srv.url + "/line/webhook", content=body, headers=line_headers(body)).status_code == 200
    api.wait_for("/v2/bot/message/reply")
    srv.stop()  # a restart: a new server on the same state
    again, api2 = _line(live, fake_api, tmp_path)
    assert httpx.post(again.url + "/line/webhook", content=body, headers=line_headers(body)).status_code == 200
    other = _event("e-new", "hi")
    assert httpx.post(again.url + "/line/webhook", content=other, headers=line_headers(other)).status_code == 200
    api2.wait_for("/v2/bot/message/reply")
    time.sleep(0.3)
    assert [c["body"]["replyToken"] for c in api2.of("/v2/bot/message/reply")] == ["rt-e-new"]


def test_traces_show_only_this_workspaces_records(live: Any, tmp_path: Path) -> None:
    from duckflow.channels.cli.main import main

    other = tmp_path / "other"
    other.mkdir()
    (other / "secret-plan.txt").write_text("the other workspace's plan\n")
    assert main(["run", "hi", "-w", str(other), "--model", "scripted:demo"]) == 1
    srv = live()
    theirs = srv.app.state.runner.store.latest(str(other.resolve()))
    sid = httpx.post(srv.url + "/v1/sessions", headers=srv.auth).json()["session_id"]
    with httpx.stream("POST", f"{srv.url}/v1/sessions/{sid}/messages", json={"text": "hello"},
                      headers={**srv.auth, **SSE}, timeout=30) as r:
        list(r.iter_lines())
    trace = srv.app.state.runner._shared_parts()["trace"]
    trace.flush(2.0)
    everything = [json.loads(line) for line in trace.path.read_text().splitlines()]
    assert any(r.get("session") == theirs for r in everything)  # the shared file holds both
    records = httpx.get(srv.url + "/v1/traces", headers=srv.auth).json()["records"]
    assert records and {r["session"] for r in records} == {sid}
    assert httpx.get(f"{srv.url}/v1/traces?session={theirs}", headers=srv.auth).json()["records"] == []


def test_a_slack_retry_after_a_restart_runs_nothing(live: Any, fake_api: Any, tmp_path: Path) -> None:
    import pytest

    pytest.importorskip("slack_sdk")
    from tests.channels.server.test_slack import _event

    def serve() -> tuple[Any, Any]:
        api = fake_api()
        return live(slack_signing_secret=SLACK, slack_bot_token="xoxb-test", slack_api_url=api.url + "/api/",
                    slack_allowed=frozenset({"U9"}), state_dir=str(tmp_path / "state")), api

    srv, api = serve()
    body = _event("hello there", event_id="EvR")
    assert httpx.post(srv.url + "/slack/events", content=body, headers=slack_headers(body)).status_code == 200
    api.wait_for("/api/chat.postMessage")
    srv.stop()
    again, api2 = serve()  # Slack retries with a fresh signature after the server came back
    assert httpx.post(again.url + "/slack/events", content=body, headers=slack_headers(body)).status_code == 200
    other = _event("and this", ts="1700000000.000200", event_id="EvS")
    assert httpx.post(again.url + "/slack/events", content=other, headers=slack_headers(other)).status_code == 200
    api2.wait_for("/api/chat.postMessage")
    time.sleep(0.3)
    assert [c["body"]["thread_ts"] for c in api2.of("/api/chat.postMessage")] == ["1700000000.000200"]


def test_a_lone_surrogate_is_a_one_line_422_on_the_stream_as_on_the_json_route(live: Any) -> None:
    """`{"text": "\\ud800"}` is valid JSON but no text: the streamed route answered 200 with an
    `internal_error` chunk and a traceback in the log; both routes now answer 422 in one line."""
    srv = live()
    sid = httpx.post(srv.url + "/v1/sessions", headers=srv.auth).json()["session_id"]
    body = b'{"text": "\\ud800"}'
    for headers in ({**srv.auth, **SSE}, srv.auth):
        r = httpx.post(f"{srv.url}/v1/sessions/{sid}/messages", content=body, headers=headers)
        assert r.status_code == 422, (headers, r.status_code, r.text[:200])
        detail = r.json()["detail"]
        assert "surrogate" in detail and "\n" not in detail
    # a real character written as escapes (a surrogate pair) is text and still accepted
    pair = httpx.post(f"{srv.url}/v1/sessions/{sid}/messages", content=b'{"text": "\\ud83d\\ude00 hi"}',
                      headers=srv.auth)
    assert pair.status_code in (200, 202), pair.text[:200]
    time.sleep(0.3)
    assert srv.app.state.chunks.since(sid, 0)  # the good one ran; the bad ones wrote nothing before it
