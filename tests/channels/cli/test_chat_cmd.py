"""`duckflow chat` behaviour without a terminal: commands, inline approvals, edit, cancel."""

from __future__ import annotations

import asyncio
import io
from typing import Any

from rich.console import Console

from duckflow.channels.cli.chat_cmd import Chat
from duckflow.channels.cli.run_cmd import Renderer
from duckflow.llm.scripted import ScriptedModel, tool_call
from tests.helpers.companion import decision


def _chat(opened: Any) -> tuple[Chat, io.StringIO]:
    buf = io.StringIO()
    renderer = Renderer(Console(file=buf, width=100, highlight=False))
    chat = Chat(opened, renderer)
    opened.session.chunks.subscribe(renderer)
    return chat, buf


async def _settle(chat: Chat) -> None:
    if chat.loop.busy:
        await chat.loop.wait(timeout=10)


async def test_inline_approval_card_then_no_with_words_denies_with_the_words_as_the_note(env: Any) -> None:
    model = ScriptedModel([
        decision("EXECUTION", "base_main_specialized", rationale="write a.py"),
        tool_call("write_file", path="a.py", content="print('a')\n"),
        decision("PLANNING", next_step="pending_user", say="OK, b.py then."),
    ])
    chat, out = _chat(env.open(model))
    assert await chat.handle("write a.py")
    await _settle(chat)
    text = out.getvalue()
    job = chat.session.state.pending_job["job_id"]
    assert chat.session.state.pending_gate and "Create a.py — 1 line" in text
    assert f"job {job[:8]}" in text and job not in text  # the short id, once
    assert text.count("+print('a')") == 1 and "Apply? y(es) / n(o) / e(dit) / a(lways" in text
    await chat.handle("details")
    assert "reversible" not in out.getvalue() and "Undo:" in out.getvalue()
    await chat.handle("n")
    assert "What should it do instead? (Enter to just refuse)" in out.getvalue()
    await chat.handle("call it b.py instead")
    await _settle(chat)
    s = chat.session.state
    assert not s.pending_gate and not (env.root / "a.py").exists()
    decided = chat.session.runner.gate.get(job)
    assert decided.status == "denied" and decided.decision.note == "call it b.py instead"
    assert "Denied" in out.getvalue()


async def test_unknown_slash_word_is_refused_without_a_model_call(env: Any) -> None:
    model = ScriptedModel([decision("PLANNING", next_step="pending_user")])
    chat, out = _chat(env.open(model))
    await chat.handle("/foo")
    await chat.handle("/undo")
    await chat.handle("/udno")
    text = out.getvalue()
    assert "/foo is not a command, so nothing was sent" in text and "Did you mean /undo?" in text
    assert "nothing to undo" in text and not model.requests and not chat.loop.busy
    assert chat.session.state.task == ""


async def test_commands_while_a_task_runs_and_quit(env: Any) -> None:
    started = asyncio.Event()

    async def slow(messages: list[Any]) -> Any:
        started.set()
        await asyncio.sleep(30)
        return decision("PLANNING")

    chat, out = _chat(env.open(ScriptedModel([slow])))
    await chat.handle("long job")
    await asyncio.wait_for(started.wait(), 5)
    await chat.handle("/constraint keep it short")
    await chat.handle("another message")
    await chat.handle("/status")
    text = out.getvalue()
    assert "constraint added: keep it short" in text and "Working on it now." in text
    assert chat.session.corrections == ["another message"]
    bar = chat.toolbar()
    assert "Reading the prompt… 0s  (ask" in bar
    await chat.handle("/cancel")
    assert not chat.loop.busy and "cancelled" in chat.session.state.decision_log[-1]
    assert "Cancelled — nothing was changed." in out.getvalue() and "continue" in out.getvalue()
    assert "Paused" not in out.getvalue() and not chat.loop.paused
    assert await chat.handle("/quit") is False


async def test_a_correction_typed_during_a_task_is_sent_when_it_ends_first(env: Any) -> None:
    release = asyncio.Event()

    async def first(messages: list[Any]) -> Any:
        await asyncio.wait_for(release.wait(), 5)
        return decision("PLANNING", next_step="pending_user", say="first done")

    model = ScriptedModel([first, decision("PLANNING", next_step="pending_user", say="second done")])
    chat, out = _chat(env.open(model))
    await chat.handle("first")
    await asyncio.sleep(0.05)
    await chat.handle("second")
    release.set()
    for _ in range(100):
        if "second done" in out.getvalue():
            break
        await asyncio.sleep(0.05)
    await _settle(chat)
    assert "second done" in out.getvalue() and model.requests[1].messages[-1].content == "second"


async def test_remember_and_set_go_into_long_term_memory_and_the_base_prompt(env: Any) -> None:
    model = ScriptedModel([decision("PLANNING", next_step="pending_user")])
    chat, out = _chat(env.open(model))
    await chat.handle("/remember tests live in tests/")
    await chat.handle("/set style black")
    await chat.handle("/set broken")
    assert "usage: /set" in out.getvalue()
    await chat.handle("hello")
    await _settle(chat)
    system = model.requests[0].messages[0].content
    assert "learned: tests live in tests/" in system and "style" in system


async def test_always_approves_the_next_workspace_change_without_asking_and_diff_shows_it(env: Any) -> None:
    model = ScriptedModel([
        decision("EXECUTION", "base_main_specialized", rationale="write a.py"),
        tool_call("write_file", path="a.py", content="print('a')\n"),
        decision("EXECUTION", "base_main_specialized", rationale="write b.py"),
        tool_call("write_file", path="b.py", content="print('b')\n"),
        decision("PLANNING", next_step="pending_user", say="both written"),
    ])
    chat, out = _chat(env.open(model))
    await chat.handle("write a.py and b.py")
    await _settle(chat)
    assert chat.session.state.pending_gate and out.getvalue().count("Apply?") == 1
    await chat.handle("a")
    for _ in range(100):
        await _settle(chat)
        if (env.root / "b.py").exists() and not chat.loop.busy:
            break
        await asyncio.sleep(0.05)
    text = out.getvalue()
    assert (env.root / "a.py").exists() and (env.root / "b.py").exists()
    assert "Create b.py — 1 line" in text and "Approved (user: always for this session)" in text
    assert not chat.session.state.pending_gate and text.count("Apply?") == 1  # b.py was not asked
    await chat.handle("/diff")
    assert "+++ b/b.py" in out.getvalue() and "+print('b')" in out.getvalue()
