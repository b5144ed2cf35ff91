"""Approvals inside the engine: `Agent(ask_approval=True)` pauses before a tool that needs a person and
resumes with the answer (a typed Approval reaches the tool; a no is told to the model); reads run."""

from __future__ import annotations

from typing import Any

import pytest

from duckflow import Agent, ScriptedModel, ToolContext, UserError, tool
from duckflow.llm.scripted import reply, tool_calls


def _tools(done: list[tuple[str, Any]]) -> list[Any]:
    @tool(kind="read")
    def look(path: str) -> str:
        """Read a note."""
        done.append(("look", path))
        return f"contents of {path}"

    @tool(kind="delete")
    def remove(path: str, ctx: ToolContext) -> str:
        """Delete a note."""
        done.append(("remove", ctx.approval))
        return f"removed {path}"

    return [look, remove]


async def test_a_run_pauses_before_a_delete_and_a_yes_runs_it_with_the_approval() -> None:
    done: list[tuple[str, Any]] = []
    model = ScriptedModel([tool_calls([("look", {"path": "a.txt"}), ("remove", {"path": "a.txt"})]),
                           reply("Removed a.txt after reading it.")])
    agent = Agent("tidy", model=model, tools=_tools(done), ask_approval=True)
    paused = await agent.run("tidy up a.txt")
    assert paused.paused and paused.text == "" and done == []  # nothing of that turn ran yet
    waiting = [p for p in paused.pending if p.needs_approval]
    assert [(p.call.name, p.kind) for p in waiting] == [("remove", "delete")]
    asked = [c for c in paused.chunks if c.type == "approval"]
    assert [c.data.job_id for c in asked] == [waiting[0].id] and paused.chunks[-1].data.ending == "approval"

    with pytest.raises(UserError, match="no answer"):
        await agent.resume(paused, {})
    finished = await agent.resume(paused, {waiting[0].id: True})
    assert finished.ok and not finished.paused and finished.text == "Removed a.txt after reading it."
    assert done[0] == ("look", "a.txt") and done[1][0] == "remove" and done[1][1].by_person
    tool_messages = [m for m in model.requests[1].messages if m.role == "tool"]
    assert [m.content for m in tool_messages] == ["contents of a.txt", "removed a.txt"]


async def test_a_no_is_told_to_the_model_and_the_tool_never_runs() -> None:
    done: list[tuple[str, Any]] = []
    model = ScriptedModel([tool_calls([("remove", {"path": "b.txt"})]), reply("Fine, I left b.txt alone.")])
    agent = Agent("tidy", model=model, tools=_tools(done), ask_approval=True)
    paused = await agent.run("delete b.txt")
    finished = await agent.resume(paused, {paused.pending[0].id: False})
    assert finished.text == "Fine, I left b.txt alone." and done == []
    told = [m.content for m in model.requests[1].messages if m.role == "tool"]
    assert told and "the person said no" in told[0]
    answers = [c.data for c in finished.chunks if c.type == "approval"]
    assert [(a.phase, a.granted) for a in answers] == [("answer", False)]


async def test_reads_run_without_asking_and_agents_that_do_not_ask_run_as_before() -> None:
    done: list[tuple[str, Any]] = []
    reading = Agent("reader", model=ScriptedModel([tool_calls([("look", {"path": "c.txt"})]), reply("ok")]),
                    tools=_tools(done), ask_approval=True)
    assert (await reading.run("read c.txt")).text == "ok" and done == [("look", "c.txt")]
    plain = Agent("plain", model=ScriptedModel([tool_calls([("remove", {"path": "d.txt"})]), reply("gone")]),
                  tools=_tools(done))
    result = await plain.run("delete d.txt")
    assert result.text == "gone" and not result.pending and done[-1] == ("remove", None)
    with pytest.raises(UserError, match="not waiting"):
        await plain.resume(result, {})
