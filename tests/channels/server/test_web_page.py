"""The web page in a real browser (Debian's Chromium driven by Playwright): sign in with the one-time
link, send a message, watch it stream, approve the write on its card, see the file change, survive a
dropped connection. Screenshots of each state go to test-artifacts/web/ for review."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

sync_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SHOTS = Path(os.environ.get("DUCKFLOW_SCREENSHOTS", Path(__file__).resolve().parents[3] / "test-artifacts" / "web"))
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                reason="Chromium is not installed (apt-get install chromium; .ci/run does it as root)")


@pytest.fixture
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


def wait_js(page: Any, expr: str, timeout: float = 15.0) -> None:
    """Poll a JS expression (wait_for_function would need 'unsafe-eval', which the page's CSP forbids)."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(expr):
        assert time.monotonic() < deadline, f"not true in time: {expr}"
        time.sleep(0.05)


def trace_seqs(page: Any) -> list[int]:
    """The seqs of the trace rows (the "Details" view: every chunk, in order)."""
    return [int(t.split()[0]) for t in page.locator("#log .trace").all_text_contents()]


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def test_chat_stream_approve_and_resume_in_a_real_browser(live: Any, browser: Any) -> None:
    srv = live()
    code = srv.app.state.logins.issue()
    page = browser.new_page(viewport={"width": 1280, "height": 820})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{srv.url}/#code={code}")
    page.wait_for_selector("#conn.on", timeout=15000)
    assert "code=" not in page.url  # the one-time code leaves the address bar at once
    shot(page, "1-signed-in")

    page.fill("#text", "Create hello.py that prints a greeting")
    page.press("#text", "Enter")
    page.wait_for_selector("#log .card .approve", timeout=20000)
    assert page.locator(".msg.user").inner_text() == "Create hello.py that prints a greeting"
    assert page.locator(".msg.bot").count() >= 1
    seqs = trace_seqs(page)
    assert seqs == list(range(1, len(seqs) + 1)) and len(seqs) > 5  # chunk by chunk, in order
    card = page.locator("#log .card")
    card.locator(".points summary").click()  # the five points, one click away
    text = card.inner_text()
    for point in ("Create hello.py", "the plan is ready", "Impact", "Instead", "Risk"):
        assert point in text
    assert card.locator("pre.diff .add").count() >= 3 and "Hello from Duckflow" in card.locator("pre.diff").inner_text()
    assert not (srv.workspace / "hello.py").exists()
    shot(page, "2-approval-card")

    card.locator(".approve").click()
    page.wait_for_selector("#log .card.decided", timeout=20000)
    deadline = time.monotonic() + 20
    while not (srv.workspace / "hello.py").exists():
        assert time.monotonic() < deadline, "the approved write did not happen"
        time.sleep(0.05)
    assert "Hello from Duckflow" in (srv.workspace / "hello.py").read_text()
    wait_js(page, "document.querySelectorAll('#timeline li.end').length >= 2")
    assert card.locator(".answer").inner_text() == "Approved"
    shot(page, "3-approved-file-written")

    # the network drops; meanwhile the session goes on (a message sent from elsewhere)
    page.evaluate("window.duckflowPage.drop()")
    page.wait_for_selector("#conn.off", timeout=5000)
    shot(page, "4-connection-dropped")
    sid = page.evaluate("window.duckflowPage.state.sid")
    before = page.evaluate("window.duckflowPage.state.lastSeq")
    r = httpx.post(f"{srv.url}/v1/sessions/{sid}/messages", headers=srv.auth, json={"text": "thanks, anything else?"})
    assert r.status_code == 202
    page.wait_for_selector("#conn.on", timeout=15000)
    wait_js(page, f"window.duckflowPage.state.lastSeq > {before}")
    deadline = time.monotonic() + 20
    while (status := httpx.get(f"{srv.url}/v1/sessions/{sid}", headers=srv.auth).json())["busy"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    wait_js(page, f"window.duckflowPage.state.lastSeq === {status['last_seq']}")
    seqs = trace_seqs(page)
    assert seqs == list(range(1, status["last_seq"] + 1))  # resumed: no gap, no duplicate
    shot(page, "5-resumed")

    # the auto-approve switch: on with a scope and minutes, then off at once
    page.fill("#aa-paths", "docs/")
    page.fill("#aa-ttl", "15")
    page.check("#aa-on")
    page.wait_for_selector("#aa-state:has-text('on for docs/')", timeout=10000)
    aa = httpx.get(f"{srv.url}/v1/autoapprove", headers=srv.auth).json()
    assert aa["enabled"] and aa["scope"]["paths"] == ["docs/"] and 14 < aa["minutes_left"] <= 15
    shot(page, "6-auto-approve-on")
    page.uncheck("#aa-on")
    page.wait_for_selector("#aa-state:has-text('off')", timeout=10000)
    assert httpx.get(f"{srv.url}/v1/autoapprove", headers=srv.auth).json()["enabled"] is False
    assert errors == []


def test_without_a_token_the_page_asks_for_one_and_a_used_link_is_refused(live: Any, browser: Any) -> None:
    srv = live()
    page = browser.new_page()
    page.goto(srv.url + "/")
    page.wait_for_selector("#login:not([hidden])")
    code = srv.app.state.logins.issue()
    assert httpx.post(srv.url + "/auth/exchange", json={"code": code}).status_code == 200
    page = browser.new_page()
    page.goto(f"{srv.url}/#code={code}")
    page.wait_for_selector("#login-error:has-text('already used')")
    page.fill("#token", srv.app.state.settings.token)
    page.click("#login-form button")
    page.wait_for_selector("#conn.on", timeout=15000)
    shot(page, "0-login")
