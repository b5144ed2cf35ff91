"""Undo from every result line of the web page, in Debian's Chromium at 1280 and 390 px against a real `duckflow
serve -m scripted:demo`: each change's row offers Undo; an older one goes back through the undo stack (the
later changes with it), asked first in plain words; the buttons follow the checkpoints (Redo once undone,
none once a redo cannot be done); and every step is checked on disk. Screenshots go to test-artifacts/web/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.channels.server.test_web_conversation import (
    Served,
    ask,
    browser,  # noqa: F401 - the fixture
    open_page,
    served,  # noqa: F401 - the fixture
)
from tests.channels.server.test_web_equal import WIDTHS, shot
from tests.channels.server.test_web_page import CHROMIUM, wait_js

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Chromium is not installed")
ROWS = "#log .action[data-checkpoint]"


def _wait_buttons(page: Any, want: list[str]) -> None:
    js = ("JSON.stringify([...document.querySelectorAll('" + ROWS + "')].map(r => { const b = r.querySelector('button.undo');"
          " return b && !b.hidden ? b.textContent : ''; })) === '" + json.dumps(want, separators=(",", ":")) + "'")
    wait_js(page, js, timeout=15)


def _change(page: Any, text: str, rows: int) -> None:
    done = page.locator("#timeline li.done").count()
    ask(page, text).locator(".approve").click()
    page.locator(ROWS).nth(rows).wait_for(timeout=20000)
    wait_js(page, f"document.querySelectorAll('#timeline li.done').length > {done}", timeout=30)


@pytest.mark.parametrize("width", WIDTHS)
def test_every_change_row_offers_undo_through_the_stack_and_its_buttons_tell_the_truth(
        served: Served, browser: Any, width: int) -> None:  # noqa: F811
    page, errors = open_page(browser, served, width)
    hello = served.workspace / "hello.py"
    _change(page, "Create hello.py that prints a greeting", 0)
    assert hello.exists()
    hello.unlink()  # the person deletes it by hand; asked again, Duckflow writes it again: a second change
    _change(page, "Create hello.py again", 1)
    _wait_buttons(page, ["Undo", "Undo"])  # both changes, each with its own Undo

    # the older change: back through the stack, the later one with it — asked first, in words
    page.locator(ROWS).nth(0).locator("button.undo").click()
    confirm = page.locator("#log .confirm-undo")
    confirm.wait_for(timeout=5000)
    said = confirm.inner_text()
    assert "Undo this change? The 1 other change made after it goes too" in said
    assert "hello.py goes back to how it was before this change. /redo #1 brings all 2 back." in said
    assert hello.exists()  # nothing happens before the person says so
    shot(page, f"web-{width}-undo-confirm")
    confirm.locator("button.approve", has_text="Undo 2 changes").click()
    page.locator("#log .msg.cmd", has_text="Undone 2 changes").wait_for(timeout=15000)
    assert not hello.exists()
    _wait_buttons(page, ["Redo", "Redo"])
    assert page.locator("#log .action.undone").count() == 2
    shot(page, f"web-{width}-undo-rows")

    # Redo on the newer one: the older one comes back first (it was undone last), asked first too
    page.locator(ROWS).nth(1).locator("button.undo").click()
    confirm = page.locator("#log .confirm-undo")
    confirm.wait_for(timeout=5000)
    assert "Redo this change? The 1 other change undone after it comes back first" in confirm.inner_text()
    confirm.locator("button.approve", has_text="Redo 2 changes").click()
    page.locator("#log .msg.cmd", has_text="Redone 2 changes").wait_for(timeout=15000)
    assert "Hello from Duckflow" in hello.read_text()
    _wait_buttons(page, ["Undo", "Undo"])

    # the newest alone: one click, no question
    page.locator(ROWS).nth(1).locator("button.undo").click()
    page.locator("#log .msg.cmd", has_text="Undone: removed hello.py").wait_for(timeout=15000)
    assert not hello.exists()
    _wait_buttons(page, ["Undo", "Redo"])
    assert page.locator("#log .confirm-undo").count() == 0

    # a new change after that undo: the undone one can no longer be redone, so its row offers nothing
    _change(page, "Create hello.py once more", 2)
    assert hello.exists()
    _wait_buttons(page, ["Undo", "", "Undo"])
    assert page.locator(ROWS).nth(1).locator(".undone-note").inner_text() == "undone"
    page.locator(ROWS).nth(1).scroll_into_view_if_needed()
    shot(page, f"web-{width}-undo-truth")
    assert errors == []
