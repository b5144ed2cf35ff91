"""Slack end to end: a signed event runs the companion in its thread's session; replies and approval
buttons go out through slack_sdk to a fake Slack Web API on 127.0.0.1; a signed button click approves."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest

from tests.channels.server.conftest import wait_until
from tests.channels.server.test_webhook_signatures import SLACK, slack_headers

pytest.importorskip("slack_sdk")
pytest.importorskip("aiohttp")


def _event(text: str, *, ts: str = "1700000000.000100", thread_ts: str | None = None,
           event_id: str = "Ev1") -> bytes:
    event: dict[str, Any] = {"type": "message", "channel": "C123", "user": "U9", "text": text, "ts": ts}
    if thread_ts:
        event["thread_ts"] = thread_ts
    return json.dumps({"type": "event_callback", "event_id": event_id, "team_id": "T1", "event": event}).encode()


def test_a_thread_is_a_session_replies_go_to_the_thread_and_buttons_approve(live: Any, fake_api: Any) -> None:
    slack = fake_api()
    srv = live(slack_signing_secret=SLACK, slack_bot_token="xoxb-test", slack_api_url=slack.url + "/api/",
               slack_allowed=frozenset({"U9", "U6"}))
    body = _event("<@UBOT> make hello.py")
    t0 = time.monotonic()
    r = httpx.post(srv.url + "/slack/events", content=body, headers=slack_headers(body))
    assert r.status_code == 200 and time.monotonic() - t0 < 2.0  # answered before the work is done
    posts = slack.wait_for("/api/chat.postMessage")
    first = posts[0]
    assert first["headers"]["authorization"] == "Bearer xoxb-test"
    assert first["body"]["channel"] == "C123" and first["body"]["thread_ts"] == "1700000000.000100"
    blocks = first["body"]["blocks"]
    blocks = json.loads(blocks) if isinstance(blocks, str) else blocks
    buttons = [e for b in blocks if b["type"] == "actions" for e in b["elements"]]
    assert [b["action_id"] for b in buttons] == ["duckflow_approve", "duckflow_deny"]
    job_id = buttons[0]["value"]
    assert any("hello.py" in json.dumps(b) for b in blocks)  # the diff is on the card
    sessions = httpx.get(srv.url + "/v1/sessions", headers=srv.auth).json()["sessions"]
    assert [s["identity"] for s in sessions] == ["slack:C123:1700000000.000100"]

    # Slack retries the same event: acknowledged, not run again
    r = httpx.post(srv.url + "/slack/events", content=body, headers=slack_headers(body))
    assert r.status_code == 200

    click = {"type": "block_actions", "user": {"id": "U9"}, "channel": {"id": "C123"},
             "message": {"ts": "1700000000.000200", "thread_ts": "1700000000.000100"},
             "actions": [{"action_id": "duckflow_approve", "value": job_id}]}
    form = b"payload=" + httpx.URL("", params={"payload": json.dumps(click)}).query.split(b"=", 1)[1]
    r = httpx.post(srv.url + "/slack/interactions", content=form,
                   headers={**slack_headers(form), "Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code == 200
    wait_until(lambda: (srv.workspace / "hello.py").exists())
    job = httpx.get(f"{srv.url}/v1/approvals/{job_id}", headers=srv.auth).json()
    assert job["status"] == "granted" and job["decision"]["by"] == "slack:U9"
    later = slack.wait_for("/api/chat.postMessage", 2)
    assert all(p["body"]["thread_ts"] == "1700000000.000100" for p in later)
    time.sleep(0.3)
    sessions = httpx.get(srv.url + "/v1/sessions", headers=srv.auth).json()["sessions"]
    assert len(sessions) == 1  # the retry and the click stayed in the thread's one session


def test_a_forged_button_click_changes_nothing(live: Any, fake_api: Any) -> None:
    slack = fake_api()
    srv = live(slack_signing_secret=SLACK, slack_bot_token="xoxb-test", slack_api_url=slack.url + "/api/",
               slack_allowed=frozenset({"U9", "U6"}))
    body = _event("make hello.py", event_id="Ev2")
    httpx.post(srv.url + "/slack/events", content=body, headers=slack_headers(body))
    posts = slack.wait_for("/api/chat.postMessage")
    blocks = posts[0]["body"]["blocks"]
    blocks = json.loads(blocks) if isinstance(blocks, str) else blocks
    job_id = next(e for b in blocks if b["type"] == "actions" for e in b["elements"])["value"]
    click = {"type": "block_actions", "user": {"id": "U6"}, "channel": {"id": "C123"},
             "message": {"ts": "1", "thread_ts": "1700000000.000100"},
             "actions": [{"action_id": "duckflow_approve", "value": job_id}]}
    form = b"payload=" + httpx.URL("", params={"payload": json.dumps(click)}).query.split(b"=", 1)[1]
    r = httpx.post(srv.url + "/slack/interactions", content=form, headers=slack_headers(form, secret="guess"))
    assert r.status_code == 401
    time.sleep(0.3)
    assert httpx.get(f"{srv.url}/v1/approvals/{job_id}", headers=srv.auth).json()["status"] == "pending"
    assert not (srv.workspace / "hello.py").exists()


def test_a_long_reply_goes_to_the_thread_in_parts_within_slacks_limit(fake_api: Any) -> None:
    import asyncio

    from duckflow.channels.manager import Outbox, Reply
    from duckflow.channels.slack.client import SlackSender
    from duckflow.channels.slack.events import SLACK_TEXT_LIMIT, SlackTarget

    slack = fake_api()
    text = "\n\n".join(f"Paragraph {i}: " + "all work and no play " * 40 for i in range(12))

    async def go() -> None:
        box = Outbox(SlackSender("xoxb-test", slack.url + "/api/"), limit=SLACK_TEXT_LIMIT, rate=100, burst=10)
        await box.deliver(SlackTarget("C1", "1.2"), Reply(text, approval={"job_id": "j1", "request": {"intent": "x"}}))

    asyncio.run(go())
    posts = slack.of("/api/chat.postMessage")
    assert len(posts) >= 3 and all(len(p["body"]["text"]) <= SLACK_TEXT_LIMIT for p in posts)
    assert all(p["body"]["thread_ts"] == "1.2" for p in posts)
    assert "".join("".join(p["body"]["text"].split()) for p in posts) == "".join(text.split())  # nothing lost
    assert "blocks" in posts[-1]["body"] and all("blocks" not in p["body"] for p in posts[:-1])


def test_a_user_not_on_the_allow_list_is_not_heard(live: Any, fake_api: Any) -> None:
    slack = fake_api()
    srv = live(slack_signing_secret=SLACK, slack_bot_token="xoxb-test", slack_api_url=slack.url + "/api/",
               slack_allowed=frozenset({"U1"}))
    body = _event("make hello.py", event_id="Ev9")  # from U9
    assert httpx.post(srv.url + "/slack/events", content=body, headers=slack_headers(body)).status_code == 200
    time.sleep(0.5)
    assert slack.calls == [] and httpx.get(srv.url + "/v1/sessions", headers=srv.auth).json()["sessions"] == []


def test_a_signed_but_malformed_body_is_answered_not_crashed_on(live: Any) -> None:
    # `"event": "x"` made the events endpoint answer 500 (AttributeError in the log)
    srv = live(slack_signing_secret=SLACK, slack_allowed=frozenset({"*"}))
    for body in (b'{"type": "event_callback", "event": "x"}', b'{"type": "event_callback", "event": [1]}',
                 b'{"type": "event_callback", "event": {"type": "message", "user": 5, "text": {}}}'):
        r = httpx.post(srv.url + "/slack/events", content=body, headers=slack_headers(body))
        assert r.status_code == 200, (body, r.text)
    for click in ({"type": "block_actions", "actions": "duckflow_approve"},
                  {"type": "block_actions", "actions": ["x"], "channel": "C1", "user": "U1"},
                  {"type": "block_actions", "actions": [{"action_id": "duckflow_approve", "value": "j"}],
                   "channel": "C1", "message": "m", "user": ["U1"]}):
        form = b"payload=" + httpx.URL("", params={"payload": json.dumps(click)}).query.split(b"=", 1)[1]
        r = httpx.post(srv.url + "/slack/interactions", content=form, headers=slack_headers(form))
        assert r.status_code == 200, (click, r.text)
    time.sleep(0.3)
    assert httpx.get(srv.url + "/healthz").status_code == 200
