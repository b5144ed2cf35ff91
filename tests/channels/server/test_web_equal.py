"""The web page as the terminal's equal, in Debian's Chromium at 1280 and 390 px against a real `duckflow
serve -m scripted:demo`: the first-visit screen and its examples, undo (and redo) from the change's row and
`/undo` typed, Stop mid-turn, a second tab signed in by the browser's cookie, sign-out, and a hostile
reply drawn as markdown text. Screenshots go to test-artifacts/web/ (the reviewed ones are in docs/img/)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.channels.server.test_web_conversation import (
    SHOTS,
    TASK,
    TOKEN,
    Served,
    ask,
    browser,  # noqa: F401 - the fixture
    chat_text,
    in_view,
    open_page,
    serve,
    served,  # noqa: F401 - the fixture
)
from tests.channels.server.test_web_page import CHROMIUM, wait_js

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Chromium is not installed")
WIDTHS = [1280, 390]


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


@pytest.mark.parametrize("width", WIDTHS)
def test_the_first_visit_says_what_it_can_do_and_an_example_starts_a_task(
        served: Served, browser: Any, width: int) -> None:  # noqa: F811
    page, errors = open_page(browser, served, width)
    welcome = page.locator("#welcome")
    welcome.wait_for(timeout=10000)
    text = welcome.inner_text()
    assert "What Duckflow can do here" in text and "ws" in text and "only after you approve it" in text
    examples = welcome.locator("button.example")
    assert examples.count() == 3 and all(in_view(page, f"#welcome button.example >> nth={i}") for i in range(3))
    shot(page, f"web-{width}-first-visit")
    examples.filter(has_text="Create hello.py").click()
    page.locator("#log .card .approve").wait_for(timeout=20000)
    assert page.locator("#welcome").count() == 0  # the conversation took its place
    assert page.locator("#log .msg.user").first.inner_text() == TASK
    assert errors == []


@pytest.mark.parametrize("width", WIDTHS)
def test_undo_from_the_result_row_and_redo_and_a_typed_undo(served: Served, browser: Any, width: int) -> None:  # noqa: F811
    page, errors = open_page(browser, served, width)
    ask(page, TASK).locator(".approve").click()
    hello = served.workspace / "hello.py"
    row = page.locator("#log .action.ok", has_text="Create hello.py")
    row.locator("button.undo").wait_for(timeout=20000)
    wait_js(page, "document.querySelector('#timeline li.done') !== null")
    assert hello.exists() and page.locator("#log button.undo").count() == 1  # only on the change's row
    ends = page.locator("#log .line.turn-end").all_inner_texts()  # each turn's quiet end line
    assert len(ends) == 2 and all(" s · " in e and "tokens in" in e for e in ends), ends
    assert in_view(page, "#log button.undo")
    row.locator("button.undo").click()
    page.locator("#log .msg.cmd", has_text="Undone").wait_for(timeout=15000)
    assert not hello.exists() and "removed hello.py" in page.locator("#log .msg.cmd").first.inner_text()
    wait_js(page, "document.querySelector('#log .action.undone button.undo')?.textContent === 'Redo'")
    assert row.locator("button.undo").inner_text() == "Redo" and "undone" in row.get_attribute("class")
    assert row.get_attribute("open") is None  # the click undid; it did not open the row
    shot(page, f"web-{width}-undo")
    page.fill("#text", "/redo")  # typed, as in the terminal: the same command, never the model's
    page.press("#text", "Enter")
    page.locator("#log .msg.cmd", has_text="Redone").wait_for(timeout=15000)
    wait_js(page, "document.querySelector('#log .action.ok button.undo')?.textContent === 'Undo'")
    assert "Hello from Duckflow" in hello.read_text() and row.locator("button.undo").inner_text() == "Undo"
    assert page.locator("#log .msg.user", has_text="/redo").count() == 1
    row.locator("button.undo").click()  # undo → redo → undo: the stack holds
    page.locator("#log .msg.cmd", has_text="Undone").nth(1).wait_for(timeout=15000)
    wait_js(page, "document.querySelector('#log .action.undone button.undo')?.textContent === 'Redo'")
    assert not hello.exists() and row.locator("button.undo").inner_text() == "Redo"
    page.fill("#text", "/nope")
    page.press("#text", "Enter")
    page.locator("#log .msg.cmd.refused", has_text="/nope is not a command, so nothing was sent").wait_for(timeout=15000)
    listed = served.api("GET", "/v1/sessions")["sessions"][0]
    assert listed["title"] == TASK  # commands never name the conversation
    shot(page, f"web-{width}-commands")
    assert errors == []


@pytest.mark.parametrize("width", WIDTHS)
def test_stop_cancels_the_turn_at_once_and_marks_the_partial_reply(tmp_path: Path, browser: Any, width: int) -> None:  # noqa: F811
    with serve(tmp_path, delay="0.15") as slow:  # the demo model writes a word every 0.15 s
        page, errors = open_page(browser, slow, width)
        page.fill("#text", TASK)
        page.press("#text", "Enter")
        page.locator("#stop").wait_for(state="visible", timeout=15000)
        assert page.locator("#send").is_hidden() and in_view(page, "#stop")
        wait_js(page, "[...document.querySelectorAll('#log .msg.bot')].some(b => b.textContent.split(' ').length >= 3)")
        wait_js(page, "!document.querySelector('#log pre.writing').hidden", timeout=30)  # the plan, as it is written
        page.fill("#text", "/status")  # a command while it works: answered at once, the turn goes on
        page.press("#text", "Enter")
        page.locator("#log .msg.cmd", has_text="Working on it now.").wait_for(timeout=5000)
        assert page.locator("#stop").is_visible()
        shot(page, f"web-{width}-stop")
        asked = time.monotonic()
        page.click("#stop")
        page.locator("#log .line", has_text="Cancelled — nothing was changed.").wait_for(timeout=5000)
        wait_js(page, "document.getElementById('stop').hidden", timeout=5)
        assert time.monotonic() - asked < 3  # at once, not when the model would have finished
        stopped = page.locator("#log .msg.bot.cancelled")
        assert stopped.count() == 1 and stopped.locator(".stopped").inner_text() == "(cancelled)"
        assert page.locator("#send").is_visible() and page.locator("#log .card").count() == 0
        assert any("Cancelled by you" in e for e in page.locator("#timeline li").all_inner_texts())
        shot(page, f"web-{width}-stopped")
        sid = page.evaluate("window.duckflowPage.state.sid")
        state = slow.api("GET", f"/v1/sessions/{sid}")
        assert state["busy"] is False and state["task"] == TASK  # kept: the next message goes on from it
        assert not (slow.workspace / "hello.py").exists()
        assert errors == []


@pytest.mark.parametrize("width", WIDTHS)
def test_a_second_tab_is_signed_in_and_signing_out_signs_the_browser_out(
        served: Served, browser: Any, width: int) -> None:  # noqa: F811
    context = browser.new_context(viewport={"width": width, "height": 844 if width < 500 else 800})
    first = context.new_page()
    first.goto(served.link)
    first.wait_for_selector("#conn.on", timeout=15000)
    cookie = next(c for c in context.cookies() if c["name"] == "duckflow_signin")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["expires"] > time.time() + 86400
    assert "duckflow_signin" not in first.evaluate("document.cookie")  # no script can read it
    assert first.evaluate("Object.keys(sessionStorage).length") == 0  # nor the token: it is not on the page

    second = context.new_page()
    second.goto(served.link)  # the same link again: used once already, yet this browser is signed in
    second.wait_for_selector("#conn.on", timeout=15000)
    assert second.locator("#login").is_hidden()
    third = context.new_page()
    third.goto(served.url + "/")  # a plain new tab
    third.wait_for_selector("#conn.on", timeout=15000)
    shot(third, f"web-{width}-second-tab")
    assert httpx.post(served.url + "/auth/exchange", json={"code": served.link.split("#code=")[1]}).status_code == 401

    stolen = {"Cookie": f"duckflow_signin={cookie['value']}"}
    assert httpx.get(served.url + "/v1/sessions", headers=stolen).status_code == 200
    assert httpx.post(served.url + "/v1/sessions", headers=stolen).status_code == 401  # no page header: no change
    if width < 500:
        third.click("#panel-toggle")
    third.click("#sign-out")
    third.wait_for_selector("#login:not([hidden])")
    assert "Signed out" in third.locator("#login-error").inner_text()
    first.reload()
    first.wait_for_selector("#login:not([hidden])")  # every tab of the browser
    assert httpx.get(served.url + "/v1/sessions", headers=stolen).status_code == 401  # a copy is revoked
    assert httpx.get(served.url + "/v1/sessions", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    first.fill("#token", TOKEN)  # the token signs the browser in again
    first.click("#login-form button")
    first.wait_for_selector("#conn.on", timeout=15000)
    context.close()


HOSTILE = ("Here is **the plan**, with `code` and a [guide](https://example.org/guide):\n\n"
           "1. read `app.py`\n2. write *tests*\n\n"
           "```python\nprint('<b>hi</b>')\n```\n\n"
           "<img src=x onerror=\"window.pwned=1\"> and [click](javascript:window.pwned=2) "
           "<script>window.pwned=3</script>")


@pytest.mark.parametrize("width", WIDTHS)
def test_a_reply_is_markdown_and_html_in_it_is_shown_as_text(live: Any, tmp_path: Path, browser: Any,  # noqa: F811
                                                             width: int) -> None:
    from duckflow.channels.runner import SessionRunner
    from duckflow.llm.scripted import ScriptedModel, reply

    (tmp_path / "ws").mkdir()
    chat = ScriptedModel([reply(HOSTILE)], name="chat")  # the Chat role answers with its own model
    srv = live(runner=SessionRunner(tmp_path / "ws", model_name="scripted:demo", role_models={"chat": chat}))
    page = browser.new_page(viewport={"width": width, "height": 844 if width < 500 else 800})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{srv.url}/#code={srv.app.state.logins.issue()}")
    page.wait_for_selector("#conn.on", timeout=15000)
    page.fill("#text", "hello, how would you go about it?")
    page.press("#text", "Enter")
    bubble = page.locator("#log .msg.bot.md", has_text="the plan")
    bubble.wait_for(timeout=15000)
    wait_js(page, "document.querySelector('#timeline li.end') !== null")
    assert bubble.locator("strong").inner_text() == "the plan"
    assert bubble.locator("ol li").all_inner_texts() == ["read app.py", "write tests"]
    assert bubble.locator("ol li em").inner_text() == "tests"
    assert bubble.locator("pre.code").inner_text() == "print('<b>hi</b>')"
    link = bubble.locator("a")
    assert link.count() == 1 and link.get_attribute("href") == "https://example.org/guide"
    assert "noopener" in (link.get_attribute("rel") or "")
    shown = bubble.inner_text()
    assert '<img src=x onerror="window.pwned=1">' in shown and "[click](javascript:window.pwned=2)" in shown
    assert "<script>window.pwned=3</script>" in shown
    assert page.locator("#log img, #log script, #log b").count() == 0
    assert page.evaluate("window.pwned") is None
    assert "script-src 'self'" in httpx.get(srv.url + "/").headers["content-security-policy"]
    shot(page, f"web-{width}-markdown")
    assert errors == [] and "Traceback" not in chat_text(page)


ASK = ('~ the task does not say the name\n#c0.9 #m0.9 #f0.9 #s0.9\n'
       '? "Which name should the script have?"\n  1. greet.py\n  2. hello.py\n')
WRITE = ('~ write hello.py as answered\n#c0.9 #m0.9 #f0.9 #s0.9\n$ create @ hello.py\n---\nprint("hi")\n---\n'
         '~ next: DONE\n')


@pytest.mark.parametrize("width", WIDTHS)
def test_a_question_from_the_model_offers_its_options_and_a_click_answers(
        live: Any, tmp_path: Path, browser: Any, width: int, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    from duckflow.channels.runner import SessionRunner
    from duckflow.llm.scripted import ScriptedModel, reply

    config = tmp_path / "config.toml"
    config.write_text('[companion]\ncodec = "symops"\nmode = "single_call"\n', encoding="utf-8")
    monkeypatch.setenv("DUCKFLOW_CONFIG", str(config))
    (tmp_path / "ws").mkdir()
    model = ScriptedModel([reply(ASK), reply(WRITE)], name="asker")
    srv = live(runner=SessionRunner(tmp_path / "ws", model_factory=lambda: model))
    page = browser.new_page(viewport={"width": width, "height": 844 if width < 500 else 800})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{srv.url}/#code={srv.app.state.logins.issue()}")
    page.wait_for_selector("#conn.on", timeout=15000)
    page.fill("#text", "Create a script that prints hi")
    page.press("#text", "Enter")
    card = page.locator("#log .card.question")
    card.wait_for(timeout=15000)
    assert card.locator(".headline").inner_text() == "Which name should the script have?"
    assert card.locator("button.option").all_inner_texts() == ["1. greet.py", "2. hello.py"]
    assert in_view(page, "#log .card.question button.option >> nth=1")
    shot(page, f"web-{width}-question")
    card.locator("button.option", has_text="hello.py").click()
    page.locator("#log .card .approve").wait_for(timeout=15000)  # the answer reached the model: it writes
    assert card.locator(".answer").inner_text() == "Answered: hello.py" and card.locator("button").count() == 0
    assert page.locator("#log .card:not(.question) .headline").inner_text().startswith("Create hello.py")
    assert "hello.py" in model.requests[1].messages[-1].content
    assert errors == []


def test_what_a_model_writes_shows_while_it_writes(served: Served, browser: Any) -> None:  # noqa: F811
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(served.url + "/")
    page.wait_for_selector("#login:not([hidden])")
    written = "~ write the script\n$ create @ hello.py\n---\nprint('hi')\nprint('there')\n"
    seen = page.evaluate("""(written) => {
        const log = document.createElement("div"), tl = document.createElement("ol");
        const hooks = { nearBottom: () => true, added() {}, attention() {}, decide() {}, answered() {}, done() {}, busy() {} };
        const talk = new Talk.Conversation(log, tl, hooks);
        document.body.appendChild(log);
        talk.show({ seq: 1, type: "notice", agent: "router", data: { code: "route", message: "", details: { text: "go" } } });
        talk.show({ seq: 2, type: "progress", agent: "companion.specialized", data: { phase: "start", what: "asking m" } });
        const out = [];
        for (const piece of written.match(/\\s*\\S+\\s*/g)) {
          talk.show({ seq: 3, type: "delta", agent: "companion.specialized", data: { text: piece } });
          out.push(log.querySelector("pre.writing").hidden ? "" : log.querySelector("pre.writing").textContent);
        }
        talk.show({ seq: 4, type: "done", agent: "companion", data: { ending: "done", text: "" } });
        out.push(log.querySelector("pre.writing").hidden ? "(hidden)" : "shown");
        return out;
    }""", written)
    assert seen[6].endswith("$ create @ ") and "$ create @ hello.py" in seen[7] and seen[-2].endswith("print('hi')\nprint('there')")  # line by line
    assert seen[-1] == "(hidden)"  # the turn ended: what it wrote is in its result


def test_a_native_calls_file_and_a_dml_reply_show_as_lines_while_written(served: Served, browser: Any) -> None:  # noqa: F811
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(served.url + "/")
    page.wait_for_selector("#login:not([hidden])")
    content = "import sys\nprint('hi é')\n"
    dml = "Thought: write it\nAction:\n🦆▶️[T:write_file|greet.py|\nimport sys\nprint('hi')\n]◀️🦆\n" \
          "🦆▶️[T:execute_shell|python3 greet.py]◀️🦆\n"
    seen = page.evaluate("""([content, dml]) => {
        const log = document.createElement("div"), tl = document.createElement("ol");
        const hooks = { nearBottom: () => true, added() {}, attention() {}, decide() {}, answered() {}, done() {}, busy() {} };
        const talk = new Talk.Conversation(log, tl, hooks);
        document.body.appendChild(log);
        const box = () => log.querySelector("pre.writing");
        talk.show({ seq: 1, type: "notice", agent: "router", data: { code: "route", message: "", details: { text: "go" } } });
        talk.show({ seq: 2, type: "progress", agent: "companion.specialized", data: { phase: "start", what: "asking m" } });
        const grow = (key, text, name) => talk.show({ seq: 3, type: "tool_call_delta", agent: "companion.specialized",
                                                       data: { id: name, name, key, text, done: false } });
        grow("path", "greet.py", "write_file");
        const out = [];
        for (let i = 0; i < content.length; i += 5) { grow("content", content.slice(i, i + 5), "write_file"); out.push(box().textContent); }
        grow("command", "python3 gr", "execute_shell"); out.push(box().textContent);
        talk.show({ seq: 4, type: "progress", agent: "companion.specialized", data: { phase: "start", what: "asking m" } });
        for (let i = 0; i < dml.length; i += 6) talk.show({ seq: 5, type: "delta", agent: "companion.specialized", data: { text: dml.slice(i, i + 6) } });
        out.push(box().textContent);
        talk.show({ seq: 6, type: "done", agent: "companion", data: { ending: "done", text: "" } });
        out.push(box().hidden ? "(hidden)" : "shown");
        return out;
    }""", [content, dml])
    assert seen[1] == "Writing greet.py:\nimport sys"  # the file's first line, as it was written
    assert seen[-4].endswith("Writing greet.py:\nimport sys\nprint('hi é')")
    assert seen[-3].endswith("print('hi é')\n$ python3 gr")  # the command as it forms
    assert seen[-2].endswith("Writing greet.py:\nimport sys\nprint('hi')\n$ python3 greet.py")  # DML, without
    assert "🦆" not in seen[-2] and "◀" not in seen[-2]  # its markers
    assert seen[-1] == "(hidden)"


@pytest.mark.parametrize("width", WIDTHS)
def test_the_file_shows_line_by_line_while_the_demo_writes_it(tmp_path: Path, browser: Any, width: int) -> None:  # noqa: F811
    """`duckflow serve -m scripted:demo` writing slowly: over SSE the page shows hello.py's lines under
    "Working…" as its write_file arguments stream, before the card; they go when the turn ends."""
    with serve(tmp_path, delay="0.08") as running:
        page, errors = open_page(browser, running, width)
        page.fill("#text", TASK)
        page.press("#text", "Enter")
        wait_js(page, "(document.querySelector('#log pre.writing') || {}).textContent?.includes('print(')", timeout=30)
        box = page.locator("#log pre.writing")
        seen = box.inner_text()
        assert "Writing hello.py:" in seen and "def main() -> None:" in seen and "{" not in seen, seen
        assert page.locator("#log .card").count() == 0  # before the card: it is being written
        assert in_view(page, "#log pre.writing")
        shot(page, f"web-{width}-writing")
        page.locator("#log .card .approve").wait_for(timeout=30000)
        wait_js(page, "document.querySelector('#log pre.writing').hidden", timeout=30)  # its turn ended
        assert errors == []
