"""The page's sign-in cookie (channels/http/auth.py SignIns): signed with a key made from the server's
token, good for 30 days, revoked on sign-out — also in another process reading the same state folder and
after a restart — and refused when the token changes or the cookie is altered."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from duckflow.channels.http.auth import PAGE_HEADER, SignIns, allowed, cookie_from

TOKEN = "a-server-token-0123456789abcdef"


def test_a_cookie_is_bound_to_the_token_and_expires(monkeypatch: pytest.MonkeyPatch) -> None:
    signins = SignIns(TOKEN)
    value = signins.issue()
    assert signins.valid(value)
    assert not SignIns("another-token-0123456789abcdef").valid(value)  # a new token signs everyone out
    head, issued, nonce, mac = value.split(".")
    assert not signins.valid(f"{head}.{int(issued) - 1}.{nonce}.{mac}")  # altered: refused
    assert not signins.valid(f"{head}.{issued}.{nonce}x.{mac}") and not signins.valid("") and not signins.valid(None)
    later = time.time() + 31 * 24 * 3600
    monkeypatch.setattr(time, "time", lambda: later)
    assert not signins.valid(value)  # 30 days, then sign in again


def test_sign_out_is_kept_across_processes_and_restarts(tmp_path: Path) -> None:
    kept = tmp_path / "signed-out"
    here, there = SignIns(TOKEN, revoked_file=kept), SignIns(TOKEN, revoked_file=kept)
    value, other = here.issue(), here.issue()
    assert there.valid(value)
    assert here.revoke(value) and not here.valid(value) and here.valid(other)
    assert not there.valid(value)  # another worker process sees the sign-out
    assert not SignIns(TOKEN, revoked_file=kept).valid(value)  # and so does a restart
    assert kept.stat().st_mode & 0o077 == 0


def test_access_is_the_bearer_token_or_the_cookie_with_the_page_header() -> None:
    signins = SignIns(TOKEN)
    cookie = f"theme=dark; duckflow_signin={signins.issue()}"
    assert cookie_from(cookie) and cookie_from("theme=dark") is None
    assert allowed({"authorization": f"Bearer {TOKEN}"}, "POST", TOKEN, signins)
    assert not allowed({"authorization": "Bearer wrong"}, "GET", TOKEN, signins)
    assert allowed({"cookie": cookie}, "GET", TOKEN, signins)
    assert not allowed({"cookie": cookie}, "POST", TOKEN, signins)  # a form from anywhere cannot add the header
    assert allowed({"cookie": cookie, PAGE_HEADER: "1"}, "POST", TOKEN, signins)
