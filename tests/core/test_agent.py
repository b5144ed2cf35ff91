"""Agent runs: chunks, seq numbering, sessions, turn limits, model failures, immutability."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from duckflow.core.agent import Agent
from duckflow.core.chunks import parse_chunk
from duckflow.core.errors import MaxTurnsExceeded, ModelCallError
from duckflow.core.session import Session
from duckflow.core.tools import ToolContext
from duckflow.errors import ConfigError, UserError
from duckflow.llm.errors import LLMTimeoutError
from duckflow.llm.scripted import (
    ScriptedModel,
    ScriptExhaustedError,
    fail,
    reply,
    tool_call,
    tool_calls,
)

from .conftest import RecordingTrace, assert_seq_contiguous


def lookup(key: str, ctx: ToolContext) -> str:
    """Look a key up in the injected table."""
    return str(ctx.extra_cfg["table"][key])


async def test_tool_turn_then_answer_streams_typed_chunks() -> None:
    model = ScriptedModel([tool_call("lookup", key="a"), reply("The value is 1.")])
    agent = Agent("clerk", "Answer from the table.", model=model, tools=[lookup],
                  extra_cfg={"table": {"a": 1}})
    result = await agent.run("what is a?")
    assert result.ok and result.text == "The value is 1."
    types = [c.type for c in result.chunks]
    assert types[:3] == ["usage", "tool_call", "tool_response"]
    assert types[-1] == "done" and "delta" in types
    response = next(c for c in result.chunks if c.type == "tool_response")
    assert response.data.content == "1" and not response.data.is_error  # type: ignore[union-attr]
    assert all(c.agent == "clerk" for c in result.chunks)
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", c.time) for c in result.chunks)
    assert_seq_contiguous(result.chunks)
    # the tool's answer went back to the model as a tool message
    second = model.requests[1].messages
    assert second[-1].role == "tool" and second[-1].content == "1"
    assert second[0].role == "system" and second[0].content == "Answer from the table."
    assert model.requests[0].tools[0].name == "lookup"
    assert result.usage.total_tokens == sum(
        c.data.prompt_tokens + c.data.completion_tokens  # type: ignore[union-attr]
        for c in result.chunks if c.type == "usage")


async def test_chunks_round_trip_as_json() -> None:
    agent = Agent("a", "x", model=ScriptedModel([reply("hi there")]))
    chunks = [c async for c in agent.stream("hello")]
    for c in chunks:
        assert parse_chunk(c.to_json()) == c
        assert c.to_sse().startswith(f"id: {c.seq}\nevent: {c.type}\n")


async def test_seq_continues_across_runs_of_one_session_and_history_is_kept() -> None:
    model = ScriptedModel([reply("first"), reply("second")])
    agent = Agent("a", "x", model=model)
    session = Session("s-1")
    first = await agent.run("one", session=session)
    second = await agent.run("two", session=session)
    all_chunks = first.chunks + second.chunks
    assert_seq_contiguous(all_chunks)
    contents = [m.content for m in model.requests[1].messages]
    assert contents == ["x", "one", "first", "two"]


async def test_max_turns_ends_with_a_clear_error_chunk() -> None:
    model = ScriptedModel([tool_call("lookup", key="a")] * 3)
    agent = Agent("looper", "x", model=model, tools=[lookup], extra_cfg={"table": {"a": 1}},
                  max_turns=3)
    result = await agent.run("go", raise_errors=False)
    assert isinstance(result.error, MaxTurnsExceeded) and result.error.code == "max_turns"
    last = result.chunks[-1]
    assert last.type == "error" and "3 model turns" in last.data.message  # type: ignore[union-attr]
    assert len(model.requests) == 3
    model.add(*[tool_call("lookup", key="a")] * 3)
    with pytest.raises(MaxTurnsExceeded, match="raise max_turns"):  # run() raises by default
        await agent.run("go")


async def test_model_failure_is_an_error_chunk_and_the_raised_error(trace: RecordingTrace) -> None:
    model = ScriptedModel([fail(LLMTimeoutError("the provider took too long"), partial="Hel")] * 2)
    agent = Agent("a", "x", model=model, trace=trace)
    result = await agent.run("hi", raise_errors=False)
    assert [c.type for c in result.chunks] == ["delta", "error"] and not result.ok
    assert isinstance(result.error, ModelCallError) and "took too long" in result.error.message
    with pytest.raises(ModelCallError, match="took too long"):
        await agent.run("hi")
    assert "error" in trace.names() and trace.names()[-1] == "agent_end"


async def test_unknown_tool_goes_back_to_the_model_as_an_error() -> None:
    model = ScriptedModel([tool_call("nope"), reply("sorry")])
    agent = Agent("a", "x", model=model, tools=[lookup])
    result = await agent.run("hi")
    assert result.text == "sorry"
    response = next(c for c in result.chunks if c.type == "tool_response")
    assert response.data.is_error and "nope" in response.data.content  # type: ignore[union-attr]
    assert any(c.type == "error" and c.data.code == "tool_not_found" for c in result.chunks)  # type: ignore[union-attr]


async def test_validation_error_gives_error_chunk_and_the_run_goes_on(trace: RecordingTrace) -> None:
    calls: list[int] = []

    def double(n: int) -> int:
        calls.append(n)
        return 2 * n

    model = ScriptedModel([tool_calls([("double", {"n": "many"})]), tool_call("double", n=2),
                           reply("4")])
    result = await Agent("a", "x", model=model, tools=[double], trace=trace).run("double it")
    errors = [c for c in result.chunks if c.type == "error"]
    assert len(errors) == 1 and errors[0].data.code == "tool_validation"  # type: ignore[union-attr]
    assert errors[0].data.tool == "double" and "'n'" in errors[0].data.message  # type: ignore[union-attr]
    assert calls == [2] and result.text == "4" and result.ok
    told = model.requests[1].messages[-1]
    assert told.role == "tool" and "invalid arguments" in told.content
    assert any(e["event"] == "error" and e["code"] == "tool_validation" for e in trace.events)


def test_name_and_instructions_are_immutable_model_is_not() -> None:
    agent = Agent("a", "x", model=ScriptedModel([reply("from b")]))
    with pytest.raises(AttributeError):
        agent.name = "b"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        agent.instructions = "y"  # type: ignore[misc]
    agent.model = ScriptedModel([reply("swapped")])
    assert agent.run_sync("hi").text == "swapped"


def test_duplicate_tool_names_are_a_user_error_at_definition() -> None:
    with pytest.raises(UserError, match="two tools named 'lookup'"):
        Agent("a", "x", tools=[lookup, lookup])


async def test_run_sync_inside_a_loop_says_what_to_do() -> None:
    with pytest.raises(UserError, match="await agent.run"):
        Agent("a", "x", model=ScriptedModel([])).run_sync("hi")


async def test_agent_without_model_reports_it() -> None:
    result = await Agent("a", "x").run("hi", raise_errors=False)
    assert isinstance(result.error, UserError) and result.error.code == "user_error"
    assert "no model" in result.error.message and [c.type for c in result.chunks] == ["error"]


async def test_a_config_error_keeps_its_type() -> None:
    with pytest.raises(ConfigError, match="no native tool calling"):
        await Agent("a", "x", model=ScriptedModel([], supports_tools=False), codec="native").run("hi")


async def test_an_exhausted_script_says_so_plainly() -> None:
    agent = Agent("a", "x", model=ScriptedModel([reply("one")], name="t"))
    assert (await agent.run("hi")).text == "one"
    with pytest.raises(ScriptExhaustedError, match="script exhausted after 1 steps") as info:
        await agent.run("again")
    assert info.value.code == "script_exhausted"


def test_override_swaps_the_model_for_a_block() -> None:
    real = ScriptedModel([reply("real")])
    agent = Agent("a", "x", model=real)
    with agent.override(model=ScriptedModel([reply("fake")])) as same:
        assert same is agent and agent.run_sync("hi").text == "fake"
    assert agent.model is real and real.requests == []


async def test_closing_the_stream_early_cancels_the_run() -> None:
    import asyncio
    import contextlib

    started, cancelled = asyncio.Event(), asyncio.Event()

    async def forever() -> str:
        started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    agent = Agent("a", "x", model=ScriptedModel([tool_call("forever"), reply("x")]), tools=[forever])
    async with contextlib.aclosing(agent.stream("go")) as chunks:
        async for chunk in chunks:
            if chunk.type == "tool_call":
                await asyncio.wait_for(started.wait(), 5)
                break
    await asyncio.wait_for(cancelled.wait(), 5)


def test_a_model_name_uses_the_registry_defaults_not_the_users_config(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from duckflow.llm.retry import FallbackModel

    cfg = tmp_path / "config.toml"
    cfg.write_text('[models]\nfallbacks = ["openai:gpt-4o-mini"]\n')
    monkeypatch.setenv("DUCKFLOW_CONFIG", str(cfg))  # a user's config must change nothing here
    agent = Agent("a", "x", model="ollama:qwen2.5")
    model = agent._resolve_model()
    assert isinstance(model, FallbackModel) and [m.name for m in model.models] == ["ollama:qwen2.5"]
    assert agent.model == "ollama:qwen2.5" and agent._resolve_model() is model  # resolved once


async def test_an_injected_resolver_turns_names_into_models() -> None:
    asked: list[str] = []

    def resolve(name: str, *, on_event: object = None) -> ScriptedModel:
        asked.append(name)
        return ScriptedModel([reply(f"I am {name}")])

    agent = Agent("a", "x", model="house:model-1", model_resolver=resolve)
    assert (await agent.run("who?")).text == "I am house:model-1" and asked == ["house:model-1"]


async def test_input_may_be_a_list_of_messages() -> None:
    from duckflow.llm.types import Message

    model = ScriptedModel([reply("ok")])
    history = [Message("user", "earlier"), Message("assistant", "noted"), Message("user", "now?")]
    result = await Agent("a", "sys", model=model).run(history)
    assert result.text == "ok"
    assert [m.content for m in model.requests[0].messages] == ["sys", "earlier", "noted", "now?"]


async def test_a_session_id_continues_seq_and_history_across_runs() -> None:
    model = ScriptedModel([reply("first"), reply("second"), reply("fresh")])
    agent = Agent("a", "x", model=model)
    one = await agent.run("one", session="by-id")
    two = await agent.run("two", session="by-id")
    assert_seq_contiguous(one.chunks + two.chunks)
    assert [m.content for m in model.requests[1].messages] == ["x", "one", "first", "two"]
    assert "by-id" in agent.sessions and agent.sessions.forget("by-id") and not agent.sessions.forget("by-id")
    three = await agent.run("three", session="by-id")
    assert three.chunks[0].seq == 1 and len(model.requests[2].messages) == 2
