"""Stages 2-3 of a run: one streamed model call, its deltas as chunks, its usage and trace."""

from __future__ import annotations

import time
from dataclasses import dataclass

from duckflow.core.chunks import ProgressChunk, ProgressData, delta
from duckflow.core.run import RunContext, count_text_tokens
from duckflow.core.text_stream import FreeTextStreamer, HeldText
from duckflow.llm.types import (
    Collector,
    Message,
    Model,
    ModelSettings,
    ProgressEvent,
    ToolCall,
    ToolSpec,
    Usage,
)


@dataclass
class ModelReply:
    text: str
    calls: list[ToolCall]
    usage: Usage


async def call_model(run: RunContext, model: Model, messages: list[Message], specs: list[ToolSpec],
                     settings: ModelSettings | None, *, streamer: FreeTextStreamer | HeldText | None,
                     turn: int) -> ModelReply:
    """Stream one call. Text goes out as `delta` chunks as it arrives (through `streamer` for
    text codecs); usage is the provider's, or counted with `count_tokens` when it gives none.
    A model's own waits (loading, reading the prompt, writing) go out as `progress` chunks."""
    agent = run.agent.name
    started = time.perf_counter()
    first_ms = 0.0
    got = Collector()
    async for event in model.stream(messages, tools=specs, settings=settings):
        if isinstance(event, ProgressEvent):
            run.emit(ProgressChunk(agent=agent, data=ProgressData(
                phase="start", what=event.text, stage=event.stage, tokens=event.tokens)))
            continue
        piece = got.add(event)
        if piece and not first_ms:
            first_ms = (time.perf_counter() - started) * 1000
        if not piece:
            continue
        if streamer is not None:
            streamer.feed(piece)
        else:
            run.emit(delta(agent, piece))
    text, calls, usage, finish = got.text, got.calls, got.usage, got.reason
    if usage is None:  # the provider did not say: count it ourselves
        prompt = count_text_tokens("\n".join(m.content for m in messages), model.name)
        usage = Usage(prompt, count_text_tokens(text, model.name) + 8 * len(calls))
    if run.tracing:
        run.trace_event("llm_call", model=model.name, turn=turn, tok_prompt=usage.prompt_tokens,
                        tok_completion=usage.completion_tokens, finish=finish, tool_calls=len(calls),
                        duration_ms=round((time.perf_counter() - started) * 1000, 3),
                        **_timing(usage, first_ms))
    return ModelReply(text, calls, usage)


def _timing(usage: Usage, first_ms: float) -> dict[str, float]:
    """An in-process model's own figures for the trace (none for a provider that gives none):
    prompt tokens evaluated (not reused), llama.cpp's prompt and generation time, the load, and
    the time to the first text."""
    if not (usage.prompt_ms or usage.gen_ms or usage.load_ms):
        return {}
    return {"tok_prompt_evaluated": usage.prompt_eval_tokens, "prompt_ms": usage.prompt_ms,
            "gen_ms": usage.gen_ms, "load_ms": usage.load_ms, "first_token_ms": round(first_ms, 1)}
