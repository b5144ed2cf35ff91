"""Cloud calls are masked before they leave: the fake server must never see the secret."""

from __future__ import annotations

from duckflow.llm.anthropic import AnthropicModel
from duckflow.llm.openai_compat import OpenAICompatModel
from duckflow.llm.sanitize import PlaceholderRestorer, mask_messages
from duckflow.llm.types import Message, ToolCall, complete
from tests.helpers.fakeserver import FakeServer, Reply, anthropic_stream, openai_stream

AWS_KEY = "AKIAQ3EGRSTUVWXYZ7AB"
PH = "[SECRET:aws_access_key#1]"


def conversation() -> list[Message]:
    return [
        Message("system", f"deploy key is {AWS_KEY}"),
        Message("user", f"use {AWS_KEY} to upload"),
        Message("assistant", "", tool_calls=[ToolCall("shell", {"cmd": f"aws --key {AWS_KEY}"}, "c1")]),
        Message("tool", f"ok, used {AWS_KEY}", tool_call_id="c1"),
    ]


async def test_openai_cloud_call_never_sends_the_key_and_restores_echoes(server: FakeServer) -> None:
    echo = ["The key ", PH[:9], PH[9:], " was used."]
    frags = [{"index": 0, "id": "c2", "function": {"name": "shell", "arguments": '{"cmd": "echo ' + PH + '"}'}}]
    server.queue("/v1/chat/completions", Reply(chunks=openai_stream(echo, tool_calls=frags)))
    model = OpenAICompatModel("gpt-test", base_url=f"{server.url}/v1", is_local=False)
    resp = await complete(model, conversation())
    raw = server.requests[0].body.decode()
    assert AWS_KEY not in raw and PH in raw
    assert resp.text == f"The key {AWS_KEY} was used."
    assert resp.tool_calls[0].arguments == {"cmd": f"echo {AWS_KEY}"}


async def test_restore_can_be_turned_off(server: FakeServer) -> None:
    server.queue("/v1/chat/completions", Reply(chunks=openai_stream([f"saw {PH}"])))
    model = OpenAICompatModel("gpt-test", base_url=f"{server.url}/v1", is_local=False, restore_placeholders=False)
    resp = await complete(model, conversation())
    assert resp.text == f"saw {PH}" and AWS_KEY not in server.requests[0].body.decode()


async def test_anthropic_cloud_call_is_masked(server: FakeServer) -> None:
    server.queue("/v1/messages", Reply(chunks=anthropic_stream([f"got {PH}"])))
    model = AnthropicModel("claude-test", base_url=server.url)
    model.is_local = False
    resp = await complete(model, conversation())
    assert AWS_KEY not in server.requests[0].body.decode()
    assert resp.text == f"got {AWS_KEY}"


async def test_local_models_send_text_unchanged(server: FakeServer) -> None:
    server.queue("/v1/chat/completions", Reply(chunks=openai_stream(["ok"])))
    model = OpenAICompatModel("local", base_url=f"{server.url}/v1")
    assert model.is_local
    await complete(model, conversation())
    assert AWS_KEY in server.requests[0].body.decode()


def test_cloud_is_the_default_for_remote_hosts() -> None:
    assert not OpenAICompatModel("gpt-4o").is_local
    assert not AnthropicModel("claude").is_local
    assert OpenAICompatModel("m", base_url="http://localhost:8080/v1").is_local


def test_mask_messages_uses_one_mapping_per_request() -> None:
    masked = mask_messages([Message("user", f"a {AWS_KEY}"), Message("user", f"b {AWS_KEY} c AKIAZZZZZZZZZZZZZZZZ")])
    assert masked.messages[0].content == f"a {PH}"
    assert masked.messages[1].content == f"b {PH} c [SECRET:aws_access_key#2]"
    assert masked.mapping == {PH: AWS_KEY, "[SECRET:aws_access_key#2]": "AKIAZZZZZZZZZZZZZZZZ"}


def test_restorer_holds_back_half_placeholders() -> None:
    r = PlaceholderRestorer({PH: AWS_KEY})
    out = [r.feed("x ["), r.feed("SECRET:aws_"), r.feed("access_key#1] y ["), r.feed("not one]")]
    assert "".join(out) + r.flush() == f"x {AWS_KEY} y [not one]"
    assert out[0] == "x " and out[1] == ""
