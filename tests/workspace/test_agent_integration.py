"""The workspace tools inside the engine: a scripted model writes, reads, and is refused."""

from __future__ import annotations

from pathlib import Path

from duckflow.config import WorkspaceConfig
from duckflow.core.agent import Agent
from duckflow.llm.scripted import ScriptedModel, reply, tool_call
from duckflow.workspace.tools import workspace_tools
from tests.helpers.workspace import SECRET, outside_untouched


async def test_an_agent_uses_the_tools_and_meets_the_guard(root: Path, outside: Path) -> None:
    model = ScriptedModel([
        tool_call("write_file", path="notes/todo.md", content="- ship it\n"),
        tool_call("read_file", path="../outside/secret.txt"),
        tool_call("write_file", path="escape/pwned.txt", content="x"),
        reply("done"),
    ])
    agent = Agent("coder", "edit files", model=model,
                  tools=workspace_tools(root, WorkspaceConfig(sandbox="none")))
    result = await agent.run("go")
    assert result.text == "done"
    assert (root / "notes" / "todo.md").read_text() == "- ship it\n"
    responses = [c.data for c in result.chunks if getattr(c, "type", "") == "tool_response"]
    assert [r.is_error for r in responses] == [False, True, True]
    assert "dotdot_escape" in responses[1].content and "symlink_outside" in responses[2].content
    assert all(SECRET not in r.content for r in responses)
    assert outside_untouched(outside)
