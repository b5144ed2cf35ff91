"""Slack and LINE webhooks: real HMACs; forged, missing, replayed and oversized requests are refused."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Any

import httpx

from duckflow.channels.line.verify import check_line, line_signature
from duckflow.channels.slack.verify import check_slack, slack_signature

SLACK = "8f742231b10e8888abcd99yyyzzz85a5"
LINE = "line-channel-secret-abc"


def slack_headers(body: bytes, secret: str = SLACK, ts: int | None = None) -> dict[str, str]:
    stamp = str(int(time.time()) if ts is None else ts)
    sig = "v0=" + hmac.new(secret.encode(), f"v0:{stamp}:".encode() + body, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": sig, "Content-Type": "application/json"}


def line_headers(body: bytes, secret: str = LINE) -> dict[str, str]:
    sig = base64.b64encode(hmac.new(secret.encode(), body, hashlib.sha256).digest()).decode()
    return {"X-Line-Signature": sig, "Content-Type": "application/json"}


def test_slack_signature_matches_slacks_documented_example() -> None:
    # the worked example of Slack's "Verifying requests from Slack" page
    body = (b"token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V"
            b"&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text="
            b"&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN"
            b"&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c")
    expected = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
    assert slack_signature(SLACK, "1531420618", body) == expected
    assert check_slack(SLACK, "1531420618", expected, body, now=1531420618 + 10) is None
    assert check_slack(SLACK, "1531420618", expected, body, now=1531420618 + 301) is not None
    assert check_slack(SLACK, "1531420618", expected, body + b"x", now=1531420618) is not None


def test_line_signature_is_base64_hmac_of_the_raw_body() -> None:
    body = b'{"destination":"U1","events":[]}'
    good = line_signature(LINE, body)
    assert check_line(LINE, good, body) is None
    assert check_line(LINE, good, body + b" ") is not None
    assert check_line(None, good, body) is not None  # fails closed without a secret
    assert check_line(LINE, None, body) is not None


def test_slack_endpoint_verifies_before_anything(live: Any) -> None:
    srv = live(slack_signing_secret=SLACK)
    url = srv.url + "/slack/events"
    body = json.dumps({"type": "url_verification", "challenge": "c-123"}).encode()
    ok = httpx.post(url, content=body, headers=slack_headers(body))
    assert ok.status_code == 200 and ok.json() == {"challenge": "c-123"}
    assert httpx.post(url, content=body, headers=slack_headers(body, secret="wrong")).status_code == 401
    assert httpx.post(url, content=body).status_code == 401  # missing headers
    old = slack_headers(body, ts=int(time.time()) - 301)  # a genuine but replayed request
    assert httpx.post(url, content=body, headers=old).status_code == 401
    tampered = slack_headers(body)
    assert httpx.post(url, content=body.replace(b"c-123", b"c-999"), headers=tampered).status_code == 401
    form = b"payload=" + json.dumps({"type": "block_actions", "actions": []}).encode()
    assert httpx.post(srv.url + "/slack/interactions", content=form,
                      headers=slack_headers(form, secret="wrong")).status_code == 401
    assert httpx.post(srv.url + "/slack/interactions", content=form, headers=slack_headers(form)).status_code == 200


def test_webhooks_fail_closed_without_secrets(live: Any) -> None:
    srv = live()
    body = b'{"events":[]}'
    assert httpx.post(srv.url + "/line/webhook", content=body, headers=line_headers(body)).status_code == 503
    assert httpx.post(srv.url + "/slack/events", content=body, headers=slack_headers(body)).status_code == 503


def test_line_endpoint_verifies_and_caps_the_body(live: Any) -> None:
    srv = live(line_channel_secret=LINE)
    url = srv.url + "/line/webhook"
    body = json.dumps({"destination": "U0", "events": []}).encode()
    assert httpx.post(url, content=body, headers=line_headers(body)).status_code == 200
    assert httpx.post(url, content=body, headers=line_headers(body, secret="nope")).status_code == 401
    assert httpx.post(url, content=body).status_code == 401
    big = json.dumps({"events": [], "pad": "x" * 300_000}).encode()
    assert httpx.post(url, content=big, headers=line_headers(big)).status_code == 413
