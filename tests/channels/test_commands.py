"""The chat's own commands through the front door (`Conversation.stream`), as the web page, Slack and LINE
send them: /undo, /redo, /diff, /status, /model, /help answered without the router or a model; an unknown
/word refused; /undo never becomes the task, so it never names the conversation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from duckflow import Conversation
from duckflow.channels.commands import SHARED, answer_command
from duckflow.core.chunks import AnyChunk
from duckflow.llm.scripted import ScriptedModel


async def _all(stream: Any) -> list[AnyChunk]:
    return [c async for c in stream]


def _said(chunks: list[AnyChunk]) -> str:
    return next(c.data.text for c in chunks if c.type == "reply")


async def test_commands_are_answered_without_a_model_and_undo_redo_restore_the_file(
        tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("DUCKFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DUCKFLOW_CONFIG", "/dev/null")
    ws = tmp_path / "ws"
    ws.mkdir()
    model = ScriptedModel([], name="never-called")  # any model call would fail: the script is empty
    conv = Conversation.open(ws, model=model, channel="http")
    try:
        nothing = await _all(conv.stream("/undo"))
        assert [c.type for c in nothing] == ["notice", "reply", "done"]
        assert nothing[0].data.code == "command" and nothing[0].data.details["text"] == "/undo"
        assert "nothing to undo" in _said(nothing) and nothing[0].data.details["ok"] is False

        unknown = await _all(conv.stream("/frobnicate now"))
        assert _said(unknown).startswith("/frobnicate is not a command, so nothing was sent.")
        assert "/help" in _said(await _all(conv.stream("/help")))
        assert "Model: scripted:never-called" in _said(await _all(conv.stream("/model")))
        assert "Task: (none yet)" in _said(await _all(conv.stream("/status")))
        assert "terminal chat" in _said(await _all(conv.stream("/quit")))
        assert model.requests == []
        assert conv.session.state.task == "" and conv.session.state.exchanges == []

        # a change Duckflow made (through the tools' checkpoints), then /undo → /redo → /diff
        from duckflow.workspace.files import Workspace

        tools = Workspace.open(ws)
        tools.write_file("hello.py", "print('hi')\n")
        tools.checkpoints.close()
        shown = await _all(conv.stream("/diff"))
        assert shown[0].data.details["diff"] is True and "+print('hi')" in _said(shown)
        undone = await _all(conv.stream("/undo"))
        assert undone[0].data.details["ok"] is True and not (ws / "hello.py").exists()
        redone = await _all(conv.stream("/redo"))
        assert redone[0].data.details["ok"] is True and (ws / "hello.py").read_text() == "print('hi')\n"
        assert model.requests == [] and conv.session.state.task == ""
    finally:
        conv.close()


def test_every_shared_command_has_an_answer_on_the_web_and_in_the_terminal(tmp_path: Path) -> None:
    from duckflow.channels.commands import Changes
    from duckflow.companion.state import AgentState

    state = AgentState(session_id="s", workspace=str(tmp_path))
    for channel in ("cli", "http"):
        for word in SHARED:
            said = answer_command(word, state, changes=Changes(tmp_path), model="m", channel=channel)
            assert said.text and "Traceback" not in said.text
    assert "Stop" in answer_command("undo", state, changes=Changes(tmp_path), model="m", busy=True,
                                    channel="http").text
