"""The web page's image field in a real browser: the file is uploaded (POST /v1/images), the message
names it, and the vision model's answer (an OpenAI-compatible server on 127.0.0.1) appears."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.channels.server.test_images_live import vision  # noqa: F401 - the fixture
from tests.channels.server.test_web_page import browser, shot, wait_js  # noqa: F401 - fixtures and helpers
from tests.helpers.vision import VisionServer, png


def test_an_image_chosen_on_the_page_reaches_the_model(live: Any, browser: Any, vision: VisionServer,  # noqa: F811
                                                       tmp_path: Path) -> None:
    pic = tmp_path / "screen.png"
    pic.write_bytes(png(6, 5))
    srv = live(model_name="openai:gpt-4o-mini")
    page = browser.new_page(viewport={"width": 1280, "height": 820})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{srv.url}/#code={srv.app.state.logins.issue()}")
    page.wait_for_selector("#conn.on", timeout=15000)
    page.set_input_files("#image", str(pic))
    page.fill("#text", "what does this show?")
    page.press("#text", "Enter")
    wait_js(page, "document.querySelector('#log').textContent.includes('I see image/png 6x5.')", timeout=30)
    assert vision.bodies[-1]["messages"][-1]["content"][0]["text"] == "what does this show?"
    assert page.evaluate("document.querySelector('#image').value") == ""  # sent once, not with the next message
    shot(page, "7-image-answered")
    assert errors == []
