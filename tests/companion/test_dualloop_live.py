"""The dual loop, live (seed 001 §4.4), through `duckflow chat`'s own Chat and renderer.

A slowed ScriptedModel keeps the task busy; meanwhile a question is answered in parallel
(read-only), a correction reaches the task at its next step, and stop / 止めて pauses it.
"""

from __future__ import annotations

import asyncio
import io
import json
from typing import Any

from rich.console import Console

from duckflow.channels.cli.chat_cmd import Chat
from duckflow.channels.cli.render import Renderer
from duckflow.companion.sidechat import READ_ONLY_NOTE, classify
from duckflow.companion.state import Step
from duckflow.llm.scripted import ScriptedModel, ScriptStep, tool_call
from tests.helpers.companion import decision


def _chat(opened: Any) -> tuple[Chat, io.StringIO]:
    buf = io.StringIO()
    renderer = Renderer(Console(file=buf, width=120, highlight=False), verbose=True)
    chat = Chat(opened, renderer)
    opened.session.chunks.subscribe(renderer)
    return chat, buf


async def _until(cond: Any, timeout: float = 5.0) -> None:
    for _ in range(int(timeout / 0.02)):
        if cond():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition not reached")


def _answer(text: str) -> ScriptStep:
    return ScriptStep(text=json.dumps({
        "rationale": "a question", "goal_consistency": "yes", "constraint_check": "yes",
        "next_step": "done", "step": "DONE", "prompt_pattern": "base_main", "reply": text}))


def test_classify_stop_question_correction_in_both_languages() -> None:
    assert [classify(t) for t in ("stop", "Wait!", "止めて", "待って", "ストップ")] == ["stop"] * 5
    assert [classify(t) for t in ("what are you doing?", "why a.py", "どうして？", "今何してるの")] == ["question"] * 4
    assert [classify(t) for t in ("use pathlib instead", "テストも書いて")] == ["correction"] * 2


async def test_a_question_during_a_task_is_answered_at_once_and_read_only(env: Any) -> None:
    release, working = asyncio.Event(), asyncio.Event()

    async def slow_specialized(messages: list[Any]) -> Any:
        working.set()
        await asyncio.wait_for(release.wait(), 5)
        return tool_call("write_file", path="a.py", content="x = 1\n")

    def question(messages: list[Any]) -> Any:
        assert READ_ONLY_NOTE in messages[0].content and messages[-1].content == "what are you doing?"
        return _answer("I am writing a.py for you.")

    model = ScriptedModel([
        decision("EXECUTION", "base_main_specialized", rationale="write a.py", say="Writing a.py."),
        slow_specialized, question,
    ], name="slow", delay_s=0.005)
    chat, out = _chat(env.open(model))
    await chat.handle("write a.py")
    await asyncio.wait_for(working.wait(), 5)
    await chat.handle("what are you doing?")
    await _until(lambda: "I am writing a.py for you." in out.getvalue())
    assert chat.loop.busy, "answered while the task still runs"
    s = chat.session.state
    assert s.step == Step.EXECUTION, "the question's decision (step DONE) moved nothing"
    release.set()
    await chat.loop.wait(timeout=5)
    assert s.pending_gate and s.pending_job and s.pending_job["call"]["name"] == "write_file"
    assert "🦆 ↳ I am writing a.py" in out.getvalue()


async def test_stop_in_japanese_pauses_the_task_and_continue_goes_on(env: Any) -> None:
    working = asyncio.Event()

    async def slow(messages: list[Any]) -> Any:
        working.set()
        await asyncio.sleep(30)
        return tool_call("write_file", path="a.py", content="x\n")

    model = ScriptedModel([
        decision("EXECUTION", "base_main_specialized", rationale="write a.py"), slow,
        decision("EXECUTION", "base_main_specialized", rationale="write a.py again"),
        tool_call("write_file", path="a.py", content="x = 2\n"),
    ], name="slow")
    chat, out = _chat(env.open(model))
    await chat.handle("write a.py")
    await asyncio.wait_for(working.wait(), 5)
    await chat.handle("止めて")
    assert not chat.loop.busy and chat.loop.paused
    s = chat.session.state
    assert s.step == Step.EXECUTION and "paused by the person during EXECUTION" in s.decision_log[-1]
    assert "Paused" in out.getvalue() and "続けて" in out.getvalue()
    await chat.handle("続けて")
    await chat.loop.wait(timeout=5)
    assert s.pending_gate and "x = 2" in s.pending_job["call"]["arguments"]["content"]  # type: ignore[index]


async def test_a_correction_is_applied_at_the_next_step(env: Any) -> None:
    release, working = asyncio.Event(), asyncio.Event()

    async def slow_read(messages: list[Any]) -> Any:
        working.set()
        await asyncio.wait_for(release.wait(), 5)
        return tool_call("read_file", path="a.py")

    model = ScriptedModel([
        decision("EXECUTION", "base_main_specialized", rationale="look at a.py"), slow_read,
        decision("EXECUTION", next_step="pending_user", rationale="ok, pathlib", say="Switching to pathlib."),
    ], name="slow")
    (env.root / "a.py").write_text("import os\n")
    chat, out = _chat(env.open(model))
    await chat.handle("tidy a.py")
    await asyncio.wait_for(working.wait(), 5)
    await chat.handle("use pathlib, not os.path")
    assert "next step" in out.getvalue()
    release.set()
    await chat.loop.wait(timeout=5)
    third = model.requests[2].messages
    assert third[-1].content == "use pathlib, not os.path", "the task's next step got the correction"
    assert "use pathlib, not os.path" in third[0].content  # and it is a constraint in the prompt
    assert "Switching to pathlib." in out.getvalue() and not chat.session.corrections


def test_the_live_renderer_keeps_a_side_answer_and_the_task_on_separate_lines() -> None:
    from duckflow.core.chunks import ReplyChunk, ReplyData, delta

    buf = io.StringIO()
    r = Renderer(Console(file=buf, width=200, highlight=False), live_line=True)
    task = "I'll plan this first.\nThen write a.py."
    side = "I am planning a.py right now."
    for i in range(max(len(task), len(side))):  # the two streams interleave character by character
        if i < len(task):
            r(delta("companion", task[i]))
        if i < len(side):
            r(delta("companion.chat", side[i]))
    assert "🦆 I'll plan this first." in buf.getvalue().splitlines()
    assert "Then write a.py." in r.partial_view() and "🦆 ↳ I am planning a.py right now." in r.partial_view()
    r(ReplyChunk(agent="companion.chat", data=ReplyData(text=side)))
    r(ReplyChunk(agent="companion", data=ReplyData(text=task)))
    lines = buf.getvalue().splitlines()
    assert lines == ["🦆 I'll plan this first.", "🦆 ↳ I am planning a.py right now.", "Then write a.py."]
    assert r.partial_view() == ""
