"""OpenAICompatModel against a real local server speaking chat completions, with injected faults."""

from __future__ import annotations

import json

import pytest

from duckflow.llm.errors import (
    LLMAuthError,
    LLMBadRequestError,
    LLMRateLimitError,
    LLMResponseError,
    LLMServerError,
    LLMTimeoutError,
)
from duckflow.llm.openai_compat import OpenAICompatModel
from duckflow.llm.types import (
    Message,
    ModelSettings,
    TextDelta,
    ToolCall,
    ToolSpec,
    Usage,
    complete,
)
from tests.helpers.fakeserver import FakeServer, Reply, json_reply, openai_stream, sse

PATH = "/v1/chat/completions"
READ = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})


def model(server: FakeServer, **kw: object) -> OpenAICompatModel:
    return OpenAICompatModel("gpt-test", base_url=f"{server.url}/v1", api_key="sk-test", **kw)  # type: ignore[arg-type]


async def test_streams_text_deltas_and_usage(server: FakeServer) -> None:
    server.queue(PATH, Reply(chunks=openai_stream(["Hel", "lo ", "world"])))
    m = model(server)
    assert m.is_local and m.name == "openai:gpt-test"
    deltas = [e.text async for e in m.stream([Message("user", "hi")]) if isinstance(e, TextDelta)]
    assert deltas == ["Hel", "lo ", "world"]
    body = server.bodies(PATH)[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert server.requests[0].headers["authorization"] == "Bearer sk-test"
    server.queue(PATH, Reply(chunks=openai_stream(["ok"], usage=(21, 3))))
    resp = await complete(m, [Message("user", "hi")])
    assert resp.usage == Usage(21, 3) and resp.finish_reason == "stop"


async def test_tool_call_fragments_are_assembled_by_index(server: FakeServer) -> None:
    frags = [
        {"index": 0, "id": "call_a", "type": "function", "function": {"name": "read_file", "arguments": ""}},
        {"index": 1, "id": "call_b", "type": "function", "function": {"name": "read_file", "arguments": '{"pa'}},
        {"index": 0, "function": {"arguments": '{"path": '}},
        {"index": 0, "function": {"arguments": '"a.py"}'}},
        {"index": 1, "function": {"arguments": 'th": "b.py"}'}},
    ]
    server.queue(PATH, Reply(chunks=openai_stream(["Reading."], tool_calls=frags)))
    resp = await complete(model(server), [Message("user", "read")], tools=[READ])
    assert resp.text == "Reading."
    assert [(c.id, c.name, c.arguments) for c in resp.tool_calls] == [
        ("call_a", "read_file", {"path": "a.py"}), ("call_b", "read_file", {"path": "b.py"})]
    assert resp.finish_reason == "tool_calls"
    sent = server.bodies(PATH)[0]
    assert sent["tools"][0]["function"]["name"] == "read_file"


async def test_tool_messages_are_sent_in_wire_shape(server: FakeServer) -> None:
    server.queue(PATH, Reply(chunks=openai_stream(["done"])))
    history = [
        Message("system", "be brief"),
        Message("user", "read a.py"),
        Message("assistant", "", tool_calls=[ToolCall("read_file", {"path": "a.py"}, "call_1")]),
        Message("tool", "print(1)", tool_call_id="call_1", name="read_file"),
    ]
    await complete(model(server), history, settings=ModelSettings(temperature=0.1, max_tokens=50))
    sent = server.bodies(PATH)[0]
    assert sent["messages"][2] == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a.py"}'}}]}
    assert sent["messages"][3] == {"role": "tool", "tool_call_id": "call_1", "content": "print(1)"}
    assert sent["temperature"] == 0.1 and sent["max_tokens"] == 50


async def test_unreadable_tool_arguments_give_a_non_executable_call(server: FakeServer) -> None:
    frags = [{"index": 0, "id": "c", "function": {"name": "read_file", "arguments": '{"path": '}}]
    server.queue(PATH, Reply(chunks=openai_stream([], tool_calls=frags)))
    resp = await complete(model(server), [Message("user", "x")], tools=[READ])
    call = resp.tool_calls[0]
    assert not call.executable and call.raw == '{"path": ' and call.arguments == {}


@pytest.mark.parametrize(
    ("status", "cls", "retryable"),
    [(401, LLMAuthError, False), (400, LLMBadRequestError, False), (408, LLMTimeoutError, True),
     (409, LLMServerError, True), (502, LLMServerError, True), (503, LLMServerError, True)],
)
async def test_http_errors_are_mapped(server: FakeServer, status: int, cls: type, retryable: bool) -> None:
    server.queue(PATH, json_reply({"error": {"message": "nope from server"}}, status=status))
    with pytest.raises(cls) as info:
        await complete(model(server), [Message("user", "x")])
    assert info.value.status == status and info.value.retryable is retryable
    assert "nope from server" in str(info.value)


async def test_rate_limit_carries_retry_after(server: FakeServer) -> None:
    server.queue(PATH, json_reply({"error": {"message": "slow down"}}, status=429, headers={"Retry-After": "7"}))
    with pytest.raises(LLMRateLimitError) as info:
        await complete(model(server), [Message("user", "x")])
    assert info.value.retry_after == 7.0


async def test_garbage_json_in_the_stream_is_a_response_error(server: FakeServer) -> None:
    server.queue(PATH, Reply(chunks=openai_stream(["ok"])[:1] + sse((None, "{not json"))))
    with pytest.raises(LLMResponseError, match="invalid JSON"):
        await complete(model(server), [Message("user", "x")])


async def test_stream_cut_midway_is_retryable_not_a_half_answer(server: FakeServer) -> None:
    server.queue(PATH, Reply(chunks=openai_stream(["Hel", "lo"])[:2], cut=True))
    with pytest.raises(LLMServerError, match="broke before the answer was complete") as info:
        await complete(model(server), [Message("user", "x")])
    assert info.value.retryable


async def test_stream_ending_without_done_is_retryable(server: FakeServer) -> None:
    chunks = sse((None, {"choices": [{"index": 0, "delta": {"content": "Hel"}, "finish_reason": None}]}))
    server.queue(PATH, Reply(chunks=chunks))
    with pytest.raises(LLMServerError, match="incomplete"):
        await complete(model(server), [Message("user", "x")])


async def test_timeout_is_mapped(server: FakeServer) -> None:
    server.queue(PATH, Reply(chunks=openai_stream(["a"])[:1], stall=2.0))
    with pytest.raises(LLMTimeoutError):
        await complete(model(server, timeout_s=0.3), [Message("user", "x")])


async def test_error_object_inside_the_stream(server: FakeServer) -> None:
    server.queue(PATH, Reply(chunks=sse((None, {"error": {"message": "overloaded", "code": 503}}))))
    with pytest.raises(LLMServerError, match="overloaded"):
        await complete(model(server), [Message("user", "x")])


async def test_connection_refused_is_a_connection_error() -> None:
    import socket

    from duckflow.llm.errors import LLMConnectionError

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    m = OpenAICompatModel("x", base_url=f"http://127.0.0.1:{port}/v1")
    with pytest.raises(LLMConnectionError, match="cannot connect"):
        await complete(m, [Message("user", "x")])


def test_payload_extra_settings_are_merged() -> None:
    m = OpenAICompatModel("x", base_url="http://127.0.0.1:1/v1")
    body = m.payload([Message("user", "x")], [], ModelSettings(extra={"seed": 3}))
    assert body["seed"] == 3 and json.dumps(body)


async def test_html_body_is_a_response_error_not_a_retry(server: FakeServer) -> None:
    server.queue(PATH, Reply(chunks=["<html>\n<body>Welcome to nginx</body>\n</html>\n"], content_type="text/html"))
    with pytest.raises(LLMResponseError, match="not an event stream") as info:
        await complete(model(server), [Message("user", "x")])
    assert not info.value.retryable and "nginx" in str(info.value)


async def test_a_server_that_ignores_stream_true_still_answers(server: FakeServer) -> None:
    body = {"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": "Reading.", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a.py"}'}}]}}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 4}}
    server.queue(PATH, json_reply(body))
    resp = await complete(model(server), [Message("user", "x")], tools=[READ])
    assert resp.text == "Reading." and resp.tool_calls[0].arguments == {"path": "a.py"}
    assert resp.usage == Usage(9, 4) and resp.finish_reason == "tool_calls"


async def test_json_error_with_status_200(server: FakeServer) -> None:
    server.queue(PATH, json_reply({"error": {"message": "model is loading", "code": 503}}))
    with pytest.raises(LLMServerError, match="model is loading"):
        await complete(model(server), [Message("user", "x")])


async def test_tool_call_fragments_are_passed_on_as_they_arrive(server: FakeServer) -> None:
    from duckflow.llm.types import ToolCallDelta, ToolCallEvent

    frags = [
        {"index": 0, "id": "call_a", "type": "function", "function": {"name": "write_file", "arguments": ""}},
        {"index": 0, "function": {"arguments": '{"path": "a.py", "content": "x = \\u00'}},
        {"index": 0, "function": {"arguments": 'e9\\n"}'}},
    ]
    server.queue(PATH, Reply(chunks=openai_stream([], tool_calls=frags)))
    events = [e async for e in model(server).stream([Message("user", "write")], tools=[READ])]
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("ToolCallDelta") < kinds.index("ToolCallEvent")  # the pieces before the whole call
    pieces = [e for e in events if isinstance(e, ToolCallDelta)]
    assert [(p.index, p.id, p.name) for p in pieces] == [(0, "call_a", "write_file")] * 2
    assert "".join(p.arguments for p in pieces) == '{"path": "a.py", "content": "x = \\u00e9\\n"}'
    (call,) = [e.call for e in events if isinstance(e, ToolCallEvent)]
    assert call.arguments == {"path": "a.py", "content": "x = é\n"}
