"""AnthropicModel against a real local server speaking the Messages SSE sequence, with faults."""

from __future__ import annotations

import pytest

from duckflow.llm.anthropic import AnthropicModel
from duckflow.llm.errors import LLMAuthError, LLMRateLimitError, LLMResponseError, LLMServerError
from duckflow.llm.types import Message, TextDelta, ToolCall, ToolSpec, Usage, complete
from tests.helpers.fakeserver import FakeServer, Reply, anthropic_stream, json_reply, sse

PATH = "/v1/messages"
WEATHER = ToolSpec("get_weather", "Weather", {"type": "object", "properties": {"city": {"type": "string"}}})


def model(server: FakeServer, **kw: object) -> AnthropicModel:
    return AnthropicModel("claude-test", base_url=server.url, api_key="ak-test", **kw)  # type: ignore[arg-type]


async def test_text_stream_headers_system_and_usage(server: FakeServer) -> None:
    server.queue(PATH, Reply(chunks=anthropic_stream(["Hi ", "there"], usage=(30, 4))))
    m = model(server)
    events = [e async for e in m.stream([Message("system", "be kind"), Message("user", "hello")])]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hi ", "there"]
    req = server.requests[0]
    assert req.headers["x-api-key"] == "ak-test" and req.headers["anthropic-version"] == "2023-06-01"
    body = req.json
    assert body["system"] == "be kind" and body["stream"] is True and body["max_tokens"] > 0
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hello"}]}]
    server.queue(PATH, Reply(chunks=anthropic_stream(["x"], usage=(30, 4))))
    resp = await complete(m, [Message("user", "hello")])
    assert resp.usage == Usage(30, 4) and resp.finish_reason == "stop"


async def test_tool_use_block_with_json_fragments(server: FakeServer) -> None:
    server.queue(PATH, Reply(chunks=anthropic_stream(
        ["Checking."], tool=("toolu_1", "get_weather", ['{"ci', 'ty": "Pa', 'ris"}']))))
    resp = await complete(model(server), [Message("user", "weather?")], tools=[WEATHER])
    assert resp.text == "Checking."
    assert resp.tool_calls == [ToolCall("get_weather", {"city": "Paris"}, "toolu_1", raw='{"city": "Paris"}')]
    assert resp.finish_reason == "tool_calls"
    assert server.bodies(PATH)[0]["tools"][0]["input_schema"]["properties"]["city"] == {"type": "string"}


async def test_tool_use_json_fragments_are_passed_on_as_they_arrive(server: FakeServer) -> None:
    from duckflow.llm.types import ToolCallDelta

    server.queue(PATH, Reply(chunks=anthropic_stream(
        [], tool=("toolu_1", "get_weather", ['{"ci', 'ty": "Pa', 'ris"}']))))
    events = [e async for e in model(server).stream([Message("user", "weather?")], tools=[WEATHER])]
    pieces = [(e.index, e.id, e.name, e.arguments) for e in events if isinstance(e, ToolCallDelta)]
    assert pieces == [(1, "toolu_1", "get_weather", f) for f in ['{"ci', 'ty": "Pa', 'ris"}']]
    assert [e.kind for e in events].index("tool_call") > [e.kind for e in events].index("tool_call_delta")


async def test_tool_results_become_user_tool_result_blocks(server: FakeServer) -> None:
    server.queue(PATH, Reply(chunks=anthropic_stream(["Sunny."])))
    history = [
        Message("user", "weather in Paris and Rome?"),
        Message("assistant", "Let me check.", tool_calls=[
            ToolCall("get_weather", {"city": "Paris"}, "toolu_1"), ToolCall("get_weather", {"city": "Rome"}, "toolu_2")]),
        Message("tool", "sunny", tool_call_id="toolu_1"),
        Message("tool", "rain", tool_call_id="toolu_2"),
    ]
    await complete(model(server), history, tools=[WEATHER])
    msgs = server.bodies(PATH)[0]["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    assert msgs[1]["content"][1] == {"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                                     "input": {"city": "Paris"}}
    assert msgs[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"},
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "rain"}]


async def test_error_event_midstream(server: FakeServer) -> None:
    chunks = anthropic_stream(["a"])[:3] + sse(("error", {"type": "error", "error": {
        "type": "overloaded_error", "message": "Overloaded"}}))
    server.queue(PATH, Reply(chunks=chunks))
    with pytest.raises(LLMServerError, match="Overloaded") as info:
        await complete(model(server), [Message("user", "x")])
    assert info.value.retryable


async def test_missing_message_stop_is_a_retryable_cut(server: FakeServer) -> None:
    server.queue(PATH, Reply(chunks=anthropic_stream(["a", "b"], stop=False)))
    with pytest.raises(LLMServerError, match="message_stop") as info:
        await complete(model(server), [Message("user", "x")])
    assert info.value.retryable


async def test_connection_cut_midway(server: FakeServer) -> None:
    server.queue(PATH, Reply(chunks=anthropic_stream(["a", "b"])[:4], cut=True))
    with pytest.raises(LLMServerError, match="broke before the answer was complete") as info:
        await complete(model(server), [Message("user", "x")])
    assert info.value.retryable


async def test_auth_and_rate_limit_errors(server: FakeServer) -> None:
    server.queue(PATH, json_reply({"type": "error", "error": {"type": "authentication_error",
                                                              "message": "invalid x-api-key"}}, status=401))
    with pytest.raises(LLMAuthError, match="invalid x-api-key"):
        await complete(model(server), [Message("user", "x")])
    server.queue(PATH, json_reply({"error": {"message": "rate"}}, status=429,
                                  headers={"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}))
    with pytest.raises(LLMRateLimitError) as info:
        await complete(model(server), [Message("user", "x")])
    assert info.value.retry_after == 0.0  # a date in the past: retry now


async def test_garbage_body(server: FakeServer) -> None:
    server.queue(PATH, Reply(chunks=["event: message_start\ndata: <html>oops</html>\n\n"]))
    with pytest.raises(LLMResponseError):
        await complete(model(server), [Message("user", "x")])


async def test_html_body_is_not_an_event_stream(server: FakeServer) -> None:
    server.queue(PATH, Reply(chunks=["<html>gateway page</html>\n"], content_type="text/html"))
    with pytest.raises(LLMResponseError, match="not an event stream"):
        await complete(model(server), [Message("user", "x")])
