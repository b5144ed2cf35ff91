"""ScriptedModel plays its script in order, records requests and fails clearly past the end."""

from __future__ import annotations

import pytest

from duckflow.llm.errors import LLMError, LLMTimeoutError
from duckflow.llm.scripted import (
    ScriptedModel,
    ScriptError,
    ScriptExhaustedError,
    fail,
    reply,
    tool_call,
    tool_calls,
)
from duckflow.llm.types import (
    Message,
    Model,
    TextDelta,
    ToolCall,
    ToolSpec,
    Usage,
    collect,
    complete,
)


async def test_steps_play_in_order_and_requests_are_recorded() -> None:
    model = ScriptedModel([reply("hello there friend"), tool_call("read_file", path="a.py")])
    assert isinstance(model, Model)
    spec = ToolSpec("read_file", "read a file")
    first = await complete(model, [Message("user", "hi")], tools=[spec])
    assert first.text == "hello there friend"
    assert first.finish_reason == "stop"
    second = await complete(model, [Message("user", "again")])
    assert second.tool_calls[0].name == "read_file"
    assert second.tool_calls[0].arguments == {"path": "a.py"}
    assert second.tool_calls[0].id == "call_2_1"
    assert second.finish_reason == "tool_calls"
    assert [r.messages[0].content for r in model.requests] == ["hi", "again"]
    assert model.requests[0].tools == [spec]
    assert model.remaining == 0


async def test_reply_streams_several_deltas() -> None:
    model = ScriptedModel([reply("one two three")])
    events = [e async for e in model.stream([Message("user", "x")])]
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) == 3 and "".join(deltas) == "one two three"


async def test_explicit_chunks_and_usage() -> None:
    model = ScriptedModel([reply("abc", chunks=["a", "bc"], usage=Usage(5, 2))])
    events = [e async for e in model.stream([Message("user", "x")])]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["a", "bc"]
    resp = await collect(ScriptedModel([reply("abc", usage=Usage(5, 2))]).stream([]))
    assert resp.usage == Usage(5, 2)
    with pytest.raises(ValueError):
        reply("abc", chunks=["a", "b"])


async def test_tool_calls_with_text() -> None:
    model = ScriptedModel([tool_calls([("a", {"x": 1}), ToolCall("b", {})], text="doing it")])
    resp = await complete(model, [])
    assert resp.text == "doing it"
    assert [c.name for c in resp.tool_calls] == ["a", "b"]


async def test_fail_raises_at_call_time_and_partial_text_first() -> None:
    model = ScriptedModel([fail(LLMTimeoutError("slow")), fail(partial="Hel"), reply("ok")])
    with pytest.raises(LLMTimeoutError):
        await complete(model, [])
    seen: list[str] = []
    with pytest.raises(LLMError) as info:
        async for ev in model.stream([]):
            if isinstance(ev, TextDelta):
                seen.append(ev.text)
    assert seen == ["Hel"] and info.value.retryable
    assert (await complete(model, [])).text == "ok"


async def test_dynamic_step_sees_messages() -> None:
    async def echo_async(messages: list[Message]) -> str:
        return "async " + messages[-1].content

    model = ScriptedModel(
        [lambda messages: reply(f"you said {messages[-1].content}"), echo_async,
         lambda m: ToolCall("t", {"n": len(m)})]
    )
    assert (await complete(model, [Message("user", "ping")])).text == "you said ping"
    assert (await complete(model, [Message("user", "pong")])).text == "async pong"
    assert (await complete(model, [Message("user", "a"), Message("user", "b")])).tool_calls[0].arguments == {"n": 2}


async def test_running_past_the_end_names_the_step_count() -> None:
    model = ScriptedModel([reply("only")])
    await complete(model, [])
    with pytest.raises(ScriptExhaustedError, match="script exhausted after 1 steps"):
        await complete(model, [])


async def test_tool_calls_refused_when_tools_unsupported() -> None:
    model = ScriptedModel([tool_call("x")], supports_tools=False, name="small")
    assert model.name == "scripted:small" and model.is_local
    with pytest.raises(ScriptError, match="supports_tools=False"):
        await complete(model, [])
