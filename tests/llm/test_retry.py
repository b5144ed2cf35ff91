"""Retry, fallback and circuit breaker: against real local servers and scripted models."""

from __future__ import annotations

import random

import pytest

from duckflow.llm.anthropic import AnthropicModel
from duckflow.llm.errors import (
    LLMAuthError,
    LLMBadRequestError,
    LLMError,
    LLMServerError,
    LLMTimeoutError,
)
from duckflow.llm.http import parse_retry_after
from duckflow.llm.openai_compat import OpenAICompatModel
from duckflow.llm.retry import AllModelsFailedError, CircuitBreaker, FallbackModel, RetryPolicy
from duckflow.llm.scripted import ScriptedModel, fail, reply
from duckflow.llm.types import Message, TextDelta, complete
from tests.helpers.fakeserver import FakeServer, Reply, anthropic_stream, json_reply, openai_stream
from tests.llm.conftest import Recorder

PATH = "/v1/chat/completions"
HI = [Message("user", "hi")]


def oa(server: FakeServer, **kw: object) -> OpenAICompatModel:
    return OpenAICompatModel("gpt-test", base_url=f"{server.url}/v1", **kw)  # type: ignore[arg-type]


def chain(models: list, rec: Recorder, **kw: object) -> FallbackModel:  # type: ignore[type-arg]
    return FallbackModel(models, on_event=rec, sleep=rec.sleep, rng=random.Random(1), **kw)  # type: ignore[arg-type]


async def test_429_retry_after_is_honoured_then_answer(server: FakeServer, rec: Recorder) -> None:
    server.queue(PATH, json_reply({"error": {"message": "slow"}}, status=429, headers={"Retry-After": "3"}),
                 json_reply({"error": {"message": "slow"}}, status=429, headers={"Retry-After": "1.5"}),
                 Reply(chunks=openai_stream(["fine"])))
    resp = await complete(chain([oa(server)], rec), HI)
    assert resp.text == "fine"
    assert rec.sleeps == [3.0, 1.5]
    assert rec.names() == ["llm_call", "retry", "llm_call", "retry", "llm_call"]
    assert [f["result"] for n, f in rec.events if n == "llm_call"] == ["error", "error", "ok"]
    assert rec.events[1][1]["status"] == 429 and rec.events[1][1]["retry_after"] == 3.0


async def test_408_and_502_backoff_with_full_jitter_capped(server: FakeServer, rec: Recorder) -> None:
    server.queue(PATH, json_reply({}, status=408), json_reply({}, status=502), json_reply({}, status=503),
                 Reply(chunks=openai_stream(["ok"])))
    policy = RetryPolicy(base_delay=1.0, max_delay=2.5)
    assert (await complete(chain([oa(server)], rec, policy=policy), HI)).text == "ok"
    assert len(rec.sleeps) == 3
    for n, (delay, bound) in enumerate(zip(rec.sleeps, [1.0, 2.0, 2.5], strict=True)):
        assert 0.0 <= delay <= bound, (n, delay)


async def test_retries_are_bounded_then_the_error_is_raised(server: FakeServer, rec: Recorder) -> None:
    server.default(PATH, json_reply({"error": {"message": "bad gateway"}}, status=502))
    with pytest.raises(LLMServerError, match="bad gateway"):
        await complete(chain([oa(server)], rec), HI)
    assert len(server.requests) == 4 and len(rec.sleeps) == 3  # 1 try + 3 retries


@pytest.mark.parametrize(("status", "cls"), [(401, LLMAuthError), (400, LLMBadRequestError)])
async def test_never_retry_auth_or_validation(server: FakeServer, rec: Recorder, status: int, cls: type) -> None:
    server.default(PATH, json_reply({"error": {"message": "no"}}, status=status))
    with pytest.raises(cls):
        await complete(chain([oa(server)], rec), HI)
    assert len(server.requests) == 1 and rec.sleeps == []


async def test_bad_request_stops_the_chain(server: FakeServer, rec: Recorder) -> None:
    server.queue(PATH, json_reply({"error": {"message": "context too long"}}, status=400))
    backup = ScriptedModel([reply("never")])
    with pytest.raises(LLMBadRequestError):
        await complete(chain([oa(server), backup], rec), HI)
    assert backup.requests == []


async def test_fallback_to_next_provider_after_retries(server: FakeServer, rec: Recorder) -> None:
    server.default(PATH, json_reply({"error": {"message": "down"}}, status=503))
    server.queue("/v1/messages", Reply(chunks=anthropic_stream(["from claude"])))
    claude = AnthropicModel("claude-test", base_url=server.url)
    resp = await complete(chain([oa(server), claude], rec), HI)
    assert resp.text == "from claude"
    fallback = [f for n, f in rec.events if n == "fallback"]
    assert fallback == [{"from": "openai:gpt-test", "to": "anthropic:claude-test", "error": fallback[0]["error"]}]
    assert "down" in fallback[0]["error"]


async def test_auth_error_moves_to_next_model_without_retry(server: FakeServer, rec: Recorder) -> None:
    server.default(PATH, json_reply({"error": {"message": "bad key"}}, status=401))
    backup = ScriptedModel([reply("local answer")])
    assert (await complete(chain([oa(server), backup], rec), HI)).text == "local answer"
    assert len(server.requests) == 1 and rec.sleeps == []


async def test_garbage_then_timeout_then_answer_from_fallback(server: FakeServer, rec: Recorder) -> None:
    # garbage is a provider_error: retried like other provider failures (issue 8)
    server.queue(PATH, Reply(chunks=["data: {garbage\n\n"]), Reply(chunks=["data: {garbage\n\n"]))
    slow = OpenAICompatModel("slow", base_url=f"{server.url}/slow/v1", timeout_s=0.3)
    server.default("/slow/v1/chat/completions", Reply(delay=2))
    last = ScriptedModel([reply("answer")])
    resp = await complete(chain([oa(server), slow, last], rec, policy=RetryPolicy(retries=1)), HI)
    assert resp.text == "answer"
    errors = [f["error_type"] for n, f in rec.events if n == "llm_call" and f["result"] == "error"]
    assert errors == ["LLMProviderError", "LLMProviderError", "LLMTimeoutError", "LLMTimeoutError"]


async def test_all_models_failing_is_one_clear_error(rec: Recorder) -> None:
    a = ScriptedModel([fail(LLMTimeoutError("t"))] * 4, name="a")
    b = ScriptedModel([fail(LLMAuthError("denied"))], name="b")
    with pytest.raises(AllModelsFailedError, match="no model could answer: scripted:a: t; scripted:b: denied"):
        await complete(chain([a, b], rec), HI)


async def test_circuit_breaker_skips_then_half_opens(rec: Recorder) -> None:
    now = [100.0]
    breaker = CircuitBreaker(threshold=3, cooldown_s=30, clock=lambda: now[0])
    flaky = ScriptedModel([fail(), fail(), fail(), reply("back")], name="flaky")
    backup = ScriptedModel([reply(f"b{i}") for i in range(1, 5)], name="backup")
    model = chain([flaky, backup], rec, breaker=breaker, policy=RetryPolicy(retries=0))
    assert [(await complete(model, HI)).text for _ in range(3)] == ["b1", "b2", "b3"]
    assert len(flaky.requests) == 3  # three failed calls in a row open the circuit
    assert ("circuit_open", {"model": "scripted:flaky", "skipped": False, "cooldown_s": 30}) in rec.events
    rec.events.clear()
    now[0] += 10
    assert (await complete(model, HI)).text == "b4"  # skipped during the cool-down
    assert len(flaky.requests) == 3
    assert rec.names() == ["circuit_open", "fallback", "llm_call"]
    assert rec.events[0][1]["skipped"] is True
    now[0] += 21
    assert (await complete(model, HI)).text == "back"  # trial call after the cool-down
    assert breaker.is_open("scripted:flaky") is False


async def test_retries_of_one_call_do_not_trip_the_breaker(rec: Recorder) -> None:
    model = ScriptedModel([fail(), fail(), fail(), reply("fourth try")])
    breaker = CircuitBreaker(threshold=3)
    assert (await complete(chain([model], rec, breaker=breaker), HI)).text == "fourth try"
    assert "circuit_open" not in rec.names()


async def test_no_retry_after_text_reached_the_caller(rec: Recorder) -> None:
    model = ScriptedModel([fail(LLMServerError("cut"), partial="Half an "), reply("never")])
    seen: list[str] = []
    with pytest.raises(LLMServerError) as info:
        async for ev in chain([model], rec).stream(HI):
            if isinstance(ev, TextDelta):
                seen.append(ev.text)
    assert seen == ["Half ", "an "] and info.value.partial_output
    assert len(model.requests) == 1 and rec.sleeps == []


async def test_buffered_mode_retries_a_cut_stream_safely(server: FakeServer, rec: Recorder) -> None:
    server.queue(PATH, Reply(chunks=openai_stream(["Hal", "f"])[:2], cut=True), Reply(chunks=openai_stream(["Whole"])))
    seen = [ev.text async for ev in chain([oa(server)], rec, buffer=True).stream(HI) if isinstance(ev, TextDelta)]
    assert seen == ["Whole"] and len(rec.sleeps) == 1


async def test_retry_after_beyond_the_cap_gives_up_on_that_model(server: FakeServer, rec: Recorder) -> None:
    server.queue(PATH, json_reply({}, status=429, headers={"Retry-After": "3600"}))
    backup = ScriptedModel([reply("ok")])
    assert (await complete(chain([oa(server), backup], rec), HI)).text == "ok"
    assert rec.sleeps == [] and len(server.requests) == 1


def test_parse_retry_after_seconds_and_http_date() -> None:
    assert parse_retry_after("12") == 12.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:10 GMT", now=lambda: 1445412480.0) == 10.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


def test_fallback_model_properties() -> None:
    a = ScriptedModel(name="a", supports_tools=False)
    b = ScriptedModel(name="b", is_local=False)
    m = FallbackModel([a, b])
    assert m.name == "scripted:a" and not m.supports_tools and not m.is_local
    with pytest.raises(ValueError):
        FallbackModel([])
    assert isinstance(LLMTimeoutError("x"), LLMError)


async def test_cut_after_text_over_http_is_raised_not_retried(server: FakeServer, rec: Recorder) -> None:
    server.queue(PATH, Reply(chunks=openai_stream(["Hal", "f"])[:2], cut=True), Reply(chunks=openai_stream(["x"])))
    seen: list[str] = []
    with pytest.raises(LLMServerError) as info:
        async for ev in chain([oa(server)], rec).stream(HI):
            if isinstance(ev, TextDelta):
                seen.append(ev.text)
    assert seen == ["Hal", "f"] and info.value.partial_output and info.value.retryable
    assert len(server.requests) == 1 and rec.sleeps == []
