"""A real in-process model says what the wait is for (progress chunks) and reuses its KV cache
across the calls of a session, counted by llama.cpp's own counters."""

from __future__ import annotations

import pytest

from duckflow.core.agent import Agent
from duckflow.llm.constrain import constrained
from duckflow.llm.local import LocalModel, close_all
from duckflow.llm.localmodels import resolve_local
from duckflow.llm.types import Message, ProgressEvent, UsageEvent
from tests.local.conftest import needs_llama

pytestmark = [pytest.mark.local_model, needs_llama, pytest.mark.timeout(1800)]

RULES = "You are a careful assistant. " + " ".join(f"Rule {i}: answer in one short line." for i in range(40))


def smol(n_ctx: int = 2048) -> LocalModel:
    return LocalModel(resolve_local("smollm2", allow_pip=False), n_ctx=n_ctx, n_threads=2)


async def test_an_agent_run_shows_loading_reading_and_writing() -> None:
    close_all()  # this process loads the model again: the first call shows the loading
    model = smol(n_ctx=1024)
    agent = Agent("helper", "Answer briefly.", model=model)
    chunks = [c async for c in agent.stream("Say hello.")]
    stages = [(c.data.stage, c.data.what, c.data.tokens) for c in chunks if c.type == "progress" and c.data.stage]
    assert [s for s, _, _ in stages] == ["loading", "prompt", "writing"]
    assert stages[0][1].startswith("loading SmolLM2-135M-Instruct")
    assert stages[1][1] == f"reading the prompt ({stages[1][2]} tokens, {stages[1][2]} new)" and stages[1][2] > 5
    first_delta = next(i for i, c in enumerate(chunks) if c.type == "delta")
    writing = next(i for i, c in enumerate(chunks) if c.type == "progress" and c.data.stage == "writing")
    assert writing < first_delta  # the wait is named before the text arrives


async def _usage(model: LocalModel, messages: list[Message]) -> tuple[str, int, object]:
    said = ""
    usage = None
    async for ev in model.stream(messages, settings=constrained(model, max_tokens=6)):
        if isinstance(ev, ProgressEvent) and ev.stage == "prompt":
            said, new = ev.text, ev.tokens
        if isinstance(ev, UsageEvent):
            usage = ev.usage
    return said, new, usage


async def test_the_second_call_of_a_session_evaluates_only_what_is_new() -> None:
    model = smol()
    model.llama.reset()  # start cold
    first = [Message("system", RULES), Message("user", "What is 2 + 2?")]
    _, new1, u1 = await _usage(model, first)
    second = first + [Message("assistant", "4"), Message("user", "And 3 + 3?")]
    _, new2, u2 = await _usage(model, second)
    # llama.cpp's own counter (it may count the prompt's last token with the generated ones)
    assert u1.prompt_tokens == new1 > 300 and new1 - 1 <= u1.prompt_eval_tokens <= new1  # type: ignore[attr-defined]
    assert u2.prompt_tokens > u1.prompt_tokens  # type: ignore[attr-defined]
    # the second call evaluated only the new tail: what the progress line announced, not the whole prompt
    assert new2 < 40 < u2.prompt_tokens and new2 - 1 <= u2.prompt_eval_tokens <= new2  # type: ignore[attr-defined]
    assert u1.prompt_ms > 0 and u2.gen_ms > 0  # type: ignore[attr-defined]
    model.llama.reset()  # the same prompt without the kept tokens: all of it is evaluated again
    _, new3, u3 = await _usage(model, second)
    assert new3 == u2.prompt_tokens and u3.prompt_eval_tokens >= new3 - 1  # type: ignore[attr-defined]
