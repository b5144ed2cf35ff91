"""Hostile or broken provider answers: a one-line provider_error, retried; harmless variants pass;
an overall deadline stops a server that trickles keep-alives forever (real servers on 127.0.0.1)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

import pytest

from duckflow.llm.errors import LLMProviderError, LLMTimeoutError
from duckflow.llm.ollama import OllamaModel
from duckflow.llm.openai_compat import OpenAICompatModel
from duckflow.llm.retry import FallbackModel, RetryPolicy
from duckflow.llm.types import Message, complete
from tests.helpers.fakeserver import FakeServer, Reply, json_reply, openai_stream, sse

PATH = "/v1/chat/completions"
HI = [Message("user", "hi")]
DEEP = "[" * 100_000 + "]" * 100_000


def oa(server: FakeServer, **kw: object) -> OpenAICompatModel:
    return OpenAICompatModel("gpt-test", base_url=f"{server.url}/v1", **kw)  # type: ignore[arg-type]


def delta(d: dict[str, object], **extra: object) -> str:
    return json.dumps({"choices": [{"index": 0, "delta": d, "finish_reason": None}], **extra})


def call_frag(arguments: object, index: object = 0) -> dict[str, object]:
    return {"tool_calls": [{"index": index, "id": "c1", "function": {"name": "f", "arguments": arguments}}]}


BAD = {
    "choices_of_strings": '{"choices":["oops"]}',
    "index_zero": delta(call_frag("{}", index="zero")),
    "usage_lots": delta({"content": "hi"}, usage="lots"),
    "deep_reply": DEEP,
    "deep_tool_arguments": delta(call_frag("[" * 100_000 + "]" * 100_000)),
    "deep_object_arguments": delta(call_frag(json.loads("{\"a\":" * 200 + "1" + "}" * 200))),
    "content_not_text": delta({"content": [{"type": "image_url", "image_url": {"url": "x"}}]}),
    "content_number": delta({"content": 42}),
    "chunk_is_a_list": "[1, 2, 3]",
}


@pytest.mark.parametrize("name", sorted(BAD))
async def test_malformed_reply_is_a_one_line_retryable_provider_error(server: FakeServer, name: str) -> None:
    server.queue(PATH, Reply(chunks=sse((None, BAD[name]), (None, "[DONE]"))))
    with pytest.raises(LLMProviderError) as info:
        await complete(oa(server), HI)
    err = info.value
    assert err.retryable and "provider_error" in err.message
    assert "\n" not in err.message and len(err.message) < 300


async def test_harmless_variants_are_accepted(server: FakeServer) -> None:
    chunks = sse((None, delta({"content": [{"type": "text", "text": "Hel"}, {"type": "text", "text": "lo"}]})),
                 (None, delta(call_frag({"path": "a.txt", "n": 2}))),
                 (None, json.dumps({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})),
                 (None, "[DONE]"))
    server.queue(PATH, Reply(chunks=chunks))
    resp = await complete(oa(server), HI)
    assert resp.text == "Hello"
    assert resp.tool_calls[0].arguments == {"path": "a.txt", "n": 2} and resp.tool_calls[0].executable


async def test_a_provider_error_is_retried_like_other_provider_errors(server: FakeServer) -> None:
    server.queue(PATH, Reply(chunks=sse((None, '{"choices":["oops"]}'))), Reply(chunks=openai_stream(["fine"])))
    events: list[tuple[str, dict[str, object]]] = []
    model = FallbackModel([oa(server)], policy=RetryPolicy(retries=2, base_delay=0.01),
                          on_event=lambda n, f: events.append((n, f)))
    resp = await complete(model, HI)
    assert resp.text == "fine" and len(server.requests) == 2
    assert [f.get("error_type") for n, f in events if n == "llm_call"] == ["LLMProviderError", None]


def keep_alive_forever() -> Reply:
    return Reply(chunks=[": keep-alive\n\n"] * 1000, chunk_delay=0.2)


async def test_keep_alives_cannot_hold_a_call_past_its_deadline(server: FakeServer) -> None:
    server.queue(PATH, keep_alive_forever())
    started = time.monotonic()
    with pytest.raises(LLMTimeoutError, match="no complete answer within 1 s"):
        await complete(oa(server, timeout_s=5.0, deadline_s=1.0), HI)
    assert time.monotonic() - started < 4


async def test_ollama_malformed_line_is_a_provider_error(server: FakeServer) -> None:
    server.queue("/api/chat", Reply(chunks=[json.dumps({"message": {"content": ["x"]}, "done": False}) + "\n"],
                                    content_type="application/x-ndjson"))
    server.default("/api/version", json_reply({"version": "0.5"}))
    server.default("/api/tags", json_reply({"models": [{"name": "m", "model": "m"}]}))
    model = OllamaModel("m", base_url=server.url, check_context=False)
    with pytest.raises(LLMProviderError, match="provider_error"):
        await complete(model, HI)


# ---- through `duckflow run` ---------------------------------------------------------------

async def _duckflow_run(tmp_path: Path, server: FakeServer, extra: str = "") -> tuple[int, str, str, float]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    cfg = tmp_path / "cfg.toml"
    cfg.write_text(f'[models]\nbase_urls = {{openai = "{server.url}/v1"}}\n{extra}')
    env = dict(os.environ, DUCKFLOW_CONFIG=str(cfg))
    env.pop("DUCKFLOW_DEBUG", None)
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "duckflow", "run", "say hi", "-w", str(ws), "--model", "openai:gpt-x", "--json",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env)
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    return proc.returncode or 0, out.decode(), err.decode(), time.monotonic() - started


def _saved_status(session_id: str) -> dict[str, object]:
    from duckflow.companion.store import SessionStore

    store = SessionStore()
    try:
        loaded = store.load(session_id)
    finally:
        store.close()
    assert loaded is not None
    state, _ = loaded
    return {"status": state.status.value, "last_delta": state.last_delta}


@pytest.mark.parametrize("name", ["choices_of_strings", "index_zero", "usage_lots", "deep_reply"])
async def test_duckflow_run_on_a_malformed_reply(tmp_path: Path, server: FakeServer, name: str) -> None:
    server.default(PATH, Reply(chunks=sse((None, BAD[name]), (None, "[DONE]"))))
    rc, out, err, _ = await _duckflow_run(tmp_path, server, "retries = 1\n")
    assert "Traceback" not in out + err
    result = json.loads(out.strip().splitlines()[-1])
    assert rc == 1 and not result["ok"] and "provider_error" in result["message"]
    assert len(server.requests) == 2  # retried once, like any provider error
    saved = _saved_status(result["session_id"])
    assert saved["status"] != "IN_PROGRESS" and "interrupted" in str(saved["last_delta"])


async def test_duckflow_run_stops_at_the_deadline(tmp_path: Path, server: FakeServer) -> None:
    server.default(PATH, keep_alive_forever())
    rc, out, err, took = await _duckflow_run(tmp_path, server, "retries = 0\nrequest_deadline_s = 2\n")
    assert took < 30 and "Traceback" not in out + err
    result = json.loads(out.strip().splitlines()[-1])
    assert rc == 1 and "within 2 s" in result["message"]
    assert _saved_status(result["session_id"])["status"] != "IN_PROGRESS"


AN_BAD = {
    "usage_lots": {"type": "message_start", "message": {"usage": "lots"}},
    "index_zero": {"type": "content_block_start", "index": "zero", "content_block": {"type": "text"}},
    "delta_list": {"type": "content_block_delta", "index": 0, "delta": ["oops"]},
    "deep": DEEP,
}


@pytest.mark.parametrize("name", sorted(AN_BAD))
async def test_anthropic_malformed_event_is_a_provider_error(server: FakeServer, name: str) -> None:
    from duckflow.llm.anthropic import AnthropicModel

    body = AN_BAD[name]
    data = body if isinstance(body, str) else json.dumps(body)
    server.queue("/v1/messages", Reply(chunks=[f"event: x\ndata: {data}\n\n"]))
    model = AnthropicModel("claude-test", base_url=server.url, api_key="k")
    with pytest.raises(LLMProviderError, match="provider_error"):
        await complete(model, HI)


@pytest.mark.parametrize("text", [DEEP, '{"a":' * 50_000 + "1" + "}" * 50_000])
async def test_duckflow_run_on_a_reply_text_of_nested_brackets(tmp_path: Path, server: FakeServer,
                                                              text: str) -> None:
    # a well-formed stream whose *text* is 100,000 nested brackets: read, refused, no traceback
    server.default(PATH, Reply(chunks=openai_stream([text])))
    rc, out, err, took = await _duckflow_run(tmp_path, server, "retries = 0\n")
    assert "Traceback" not in out + err and took < 60
    result = json.loads(out.strip().splitlines()[-1])
    assert rc == 1 and "nests deeper than" in result["message"]
    assert _saved_status(result["session_id"])["status"] != "IN_PROGRESS"


def test_read_json_refuses_deep_nesting_without_recursion_error() -> None:
    from duckflow.protocols.jsonreply import read_json

    for text in (DEEP, "[" * 100_000, '{"a":' * 50_000 + "1" + "}" * 50_000):
        reply = read_json(text)
        assert not reply.ok and "nests deeper" in reply.errors[0]
    assert read_json('{"a": "' + "[" * 1000 + '"}').ok  # brackets inside a string are text
