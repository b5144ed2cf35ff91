"""ToolRegistry (LRU of loaded tools, stubs, specs for the wire renderers) and entry-point plugins."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from duckflow.core.agent import Agent
from duckflow.core.agent_plugins import load_agent
from duckflow.core.errors import ToolNotFoundError
from duckflow.core.plugins import PluginError, load_tool_plugins, tool_entry_points
from duckflow.core.registry import ToolRegistry
from duckflow.core.tools import Tool, tool
from duckflow.errors import UserError
from duckflow.llm.wire import anthropic_tools, openai_tools


@tool
def greet(name: str) -> str:
    """Say hello.

    Args:
        name: Who to greet.
    """
    return f"hello {name}"


def test_stubs_and_provider_definitions() -> None:
    reg = ToolRegistry([greet])
    stub = reg.get_prompt_stub()
    assert stub.splitlines()[0] == "# Say hello."
    name, _, schema = stub.splitlines()[1].partition(": ")
    assert name == '"greet"' and json.loads(schema)["properties"]["name"]["type"] == "string"
    assert openai_tools(reg.specs()) == [{"type": "function", "function": {
        "name": "greet", "description": "Say hello.", "parameters": greet.json_schema}}]
    assert anthropic_tools(reg.specs())[0]["input_schema"]["required"] == ["name"]
    assert reg.specs()[0] == greet.spec
    assert reg.get("missing") is None and "missing" not in reg and list(reg) == ["greet"]
    with pytest.raises(ToolNotFoundError, match="greet"):
        reg.load("missing")
    with pytest.raises(UserError, match="already registered"):
        reg.register(greet)


def test_lru_cache_keeps_the_most_recent_tools() -> None:
    tools = [Tool.from_function(lambda: None, name=f"t{i}") for i in range(4)]
    reg = ToolRegistry(tools, cache_size=2)
    reg.get("t0")
    reg.get("t1")
    reg.get("t0")  # t0 is now the most recent
    reg.get("t2")  # evicts t1
    assert reg.cached() == ["t0", "t2"]
    loads = reg.loads
    reg.get("t0")
    assert reg.loads == loads  # a hit
    reg.get("t1")
    assert reg.loads == loads + 1 and reg.cached() == ["t0", "t1"]
    assert ToolRegistry().cache_size == 256


@pytest.fixture
def fake_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "fakeplug_mod.py").write_text(textwrap.dedent('''
        from duckflow.core.agent import Agent
        from duckflow.core.tools import tool

        LOADED = []

        @tool
        def shout(text: str) -> str:
            """Shout the text."""
            return text.upper()

        def whisper(text: str) -> str:
            """Whisper the text."""
            return text.lower()

        def make_reviewer() -> Agent:
            return Agent("reviewer", "Review things.")

        def broken():
            raise RuntimeError("boom")
        '''))
    dist = tmp_path / "fakeplug-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fakeplug\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[duckflow.tools]\nshout = fakeplug_mod:shout\nquiet = fakeplug_mod:whisper\n\n"
        "[duckflow.agents]\nreviewer = fakeplug_mod:make_reviewer\nbad = fakeplug_mod:broken\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("fakeplug_mod", None)


def test_plugin_tools_are_listed_without_import_and_loaded_on_use(fake_plugin: Path) -> None:
    sys.modules.pop("fakeplug_mod", None)
    eps = tool_entry_points()
    assert {"shout", "quiet"} <= set(eps)
    reg = ToolRegistry(plugins=True)
    assert "shout" in reg and "fakeplug_mod" not in sys.modules
    shout = reg.get("shout")
    assert shout.description == "Shout the text." and "fakeplug_mod" in sys.modules
    assert reg.get("quiet").name == "quiet"  # a plain function takes the entry point's name
    assert {t.name for t in load_tool_plugins()} >= {"shout", "quiet"}


async def test_plugin_tools_and_agents_work_in_an_agent(fake_plugin: Path) -> None:
    from duckflow.llm.scripted import ScriptedModel, reply, tool_call

    reg = ToolRegistry(plugins=True)
    model = ScriptedModel([tool_call("shout", text="hi"), reply("done")])
    result = await Agent("a", "x", model=model, tools=reg.tools(["shout"])).run("go")
    assert model.requests[1].messages[-1].content == "HI" and result.ok
    reviewer = load_agent("reviewer")
    assert isinstance(reviewer, Agent) and reviewer.name == "reviewer"
    with pytest.raises(PluginError, match="boom"):
        load_agent("bad")
    with pytest.raises(PluginError, match="no plugin agent"):
        load_agent("nobody")
