"""Handoffs: the target streams under its own name, depth is limited, control comes back."""

from __future__ import annotations

import pytest

from duckflow.core.agent import Agent, AgentOutcome
from duckflow.core.errors import HandoffDepthExceeded
from duckflow.core.handoffs import handoff
from duckflow.llm.scripted import ScriptedModel, reply, tool_call

from .conftest import RecordingTrace, assert_seq_contiguous


async def test_target_chunks_carry_its_name_and_control_returns(trace: RecordingTrace) -> None:
    writer = Agent("writer", "Write drafts.", model=ScriptedModel([reply("a draft")]))
    boss_model = ScriptedModel([tool_call("handoff_to_writer", input="draft it"), reply("Here it is.")])
    boss = Agent("boss", "Coordinate.", model=boss_model, handoffs=[writer], trace=trace)
    result = await boss.run("make a draft")
    assert result.text == "Here it is."
    by_agent = [(c.agent, c.type) for c in result.chunks]
    assert ("writer", "delta") in by_agent and ("writer", "done") in by_agent
    handoffs = [c.data for c in result.chunks if c.type == "handoff"]
    assert [(h.phase, h.source, h.target, h.depth) for h in handoffs] == [  # type: ignore[union-attr]
        ("start", "boss", "writer", 1), ("return", "writer", "boss", 1)]
    assert boss_model.requests[1].messages[-1].content == "a draft"
    assert writer.model.requests[0].messages[-1].content == "draft it"  # type: ignore[union-attr]
    assert_seq_contiguous(result.chunks)
    names = trace.names()
    assert names.index("handoff_start") < names.index("handoff_end")
    assert [e["agent"] for e in trace.events if e["event"] == "agent_start"] == ["boss", "writer"]


async def test_depth_beyond_the_limit_stops_the_run() -> None:
    # a → b → c → d → e: the fourth handoff is one too deep with the default MAX=3
    names = ["a", "b", "c", "d", "e"]
    agents: dict[str, Agent] = {"e": Agent("e", "last", model=ScriptedModel([reply("never")]))}
    for name, nxt in zip(reversed(names[:-1]), reversed(names[1:]), strict=True):
        model = ScriptedModel([tool_call(f"handoff_to_{nxt}", input="pass it on"), reply("unused")])
        agents[name] = Agent(name, "pass", model=model, handoffs=[agents[nxt]])
    result = await agents["a"].run("go", raise_errors=False)
    assert isinstance(result.error, HandoffDepthExceeded)
    last = result.chunks[-1]
    assert last.type == "error" and last.agent == "d"
    assert "depth 4" in last.data.message and "limit of 3" in last.data.message  # type: ignore[union-attr]
    assert agents["e"].model.requests == []  # type: ignore[union-attr]
    assert all(len(agents[n].model.requests) == 1 for n in "abcd")  # type: ignore[union-attr]
    assert_seq_contiguous(result.chunks)


async def test_the_limit_is_the_root_agents_and_can_be_raised() -> None:
    c = Agent("c", "x", model=ScriptedModel([reply("deep")]))
    b = Agent("b", "x", model=ScriptedModel([tool_call("handoff_to_c", input="go"), reply("b ok")]),
              handoffs=[c])
    a = Agent("a", "x", model=ScriptedModel([tool_call("handoff_to_b", input="go"), reply("a ok")]),
              handoffs=[b], max_handoff_depth=1)
    with pytest.raises(HandoffDepthExceeded):
        await a.run("go")
    a.max_handoff_depth = 2
    b.model = ScriptedModel([tool_call("handoff_to_c", input="go"), reply("b ok")])
    c.model = ScriptedModel([reply("deep")])
    a.model = ScriptedModel([tool_call("handoff_to_b", input="go"), reply("a ok")])
    assert (await a.run("go")).text == "a ok"


async def test_on_handoff_return_can_be_overridden() -> None:
    class Editor(Agent):
        def on_handoff_return(self, target: Agent, outcome: AgentOutcome) -> str:
            return f"[{target.name} said] {outcome.text.upper()}"

    helper = Agent("helper", "x", model=ScriptedModel([reply("small")]))
    model = ScriptedModel([tool_call("handoff_to_helper", input="?"), reply("done")])
    await Editor("ed", "x", model=model, handoffs=[handoff(helper)]).run("go")
    assert model.requests[1].messages[-1].content == "[helper said] SMALL"


async def test_target_failure_returns_as_an_error_result_to_the_caller() -> None:
    helper = Agent("helper", "x", model=ScriptedModel([tool_call("x")] * 2), max_turns=2)
    model = ScriptedModel([tool_call("handoff_to_helper", input="?"), reply("recovered")])
    result = await Agent("boss", "x", model=model, handoffs=[helper]).run("go")
    assert result.text == "recovered" and result.ok
    told = model.requests[1].messages[-1]
    assert told.role == "tool" and "could not finish" in told.content
    assert any(c.type == "error" and c.agent == "helper" for c in result.chunks)


async def test_agents_in_tools_become_handoffs() -> None:
    helper = Agent("Review Bot", "Reviews code.", description="Reviews a diff.")
    boss = Agent("boss", "x", tools=[helper])
    spec = boss.tools[0].spec
    assert spec.name == "handoff_to_review_bot" and spec.description == "Reviews a diff."
    assert list(spec.parameters["properties"]) == ["input"]


async def test_a_targets_input_guardrail_stops_only_the_target() -> None:
    from duckflow.core.guardrails import Guardrail

    strict = Agent("strict", "x", model=ScriptedModel([reply("never")]),
                   guardrails=[Guardrail(regex_blocks=[(r"secret", "No secrets, please.")])])
    model = ScriptedModel([tool_call("handoff_to_strict", input="the secret plan"), reply("ok then")])
    result = await Agent("boss", "x", model=model, handoffs=[strict]).run("go")
    assert result.ok and result.text == "ok then"
    errors = [c for c in result.chunks if c.type == "error"]
    assert [(c.agent, c.data.message) for c in errors] == [("strict", "No secrets, please.")]  # type: ignore[union-attr]
    assert strict.model.requests == []  # type: ignore[union-attr]
    assert "No secrets, please." in model.requests[1].messages[-1].content
