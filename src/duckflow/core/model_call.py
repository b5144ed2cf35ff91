"""Stages 2-3 of a run: one streamed model call, its deltas as chunks, its usage and trace.

`counted_call` is the one way an agent — core's `Agent` and the companion's engine alike —
calls a model: the TokenGuard before it, `progress` chunks around it, the failure reported on
the run and raised as a `ModelCallError`, the usage announced and counted after it.
`call_model` is the call itself. A streamed reply's text goes to a `Feed`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol

from duckflow.core.chunks import (
    ProgressChunk,
    ProgressData,
    ToolCallDeltaChunk,
    ToolCallDeltaData,
    UsageChunk,
    UsageData,
    delta,
)
from duckflow.core.errors import ModelCallError
from duckflow.core.run import RunContext, count_text_tokens
from duckflow.errors import DuckflowError, UserError
from duckflow.llm.partialargs import ArgsReader, Grown
from duckflow.llm.types import (
    Collector,
    Message,
    Model,
    ModelSettings,
    ProgressEvent,
    ToolCall,
    ToolCallDelta,
    ToolSpec,
    Usage,
)


class Feed(Protocol):
    """What a streamed reply's text is fed to as it arrives: a text protocol's reader, the
    companion's reply reader, a held buffer (output guardrails first), a line feed."""

    def feed(self, text: str) -> None: ...


@dataclass
class ModelReply:
    text: str
    calls: list[ToolCall]
    usage: Usage
    model_s: float = 0.0  # the call's wall time (counted_call)
    guard_s: float = 0.0  # the time in the TokenGuard before and after it
    finish: str = "stop"  # why it ended: "stop", "tool_calls", "length" (cut off at its token bound)

    @property
    def cut_off(self) -> bool:
        """The reply ended at its token bound, not where the model ended it: never used as it is."""
        return self.finish == "length"


def model_error(exc: Exception, model: Model, *, user_errors_as_is: bool = True) -> DuckflowError:
    """A failed call as the error a person reads (a UserError, e.g. a scripted model out of
    replies, is said as it is unless the caller wants every failure as a ModelCallError)."""
    if isinstance(exc, UserError) and user_errors_as_is:
        return exc
    if isinstance(exc, DuckflowError):
        return ModelCallError(f"the model {model.name} failed: {exc.message}", hint=exc.hint)
    return ModelCallError(f"the model {model.name} failed: {type(exc).__name__}: {exc}",
                          hint="check the provider's status and the trace")


async def counted_call(run: RunContext, model: Model, messages: list[Message], specs: list[ToolSpec],
                       settings: ModelSettings | None, *, streamer: Feed | None, turn: int,
                       label: str, progress: str = "", user_errors_as_is: bool = True) -> ModelReply:
    """One model call with what goes around it: the TokenGuard's check (`label` names the call
    in its refusal), `progress` start/end chunks saying `progress` (none when empty), the
    failure reported on the run and raised, the usage announced and counted."""
    agent = run.agent.name
    t_guard = time.perf_counter()
    await run.before_call(label)
    guard_s = time.perf_counter() - t_guard
    if progress:
        run.emit(ProgressChunk(agent=agent, data=ProgressData(phase="start", what=progress)))
    started = time.perf_counter()
    try:
        reply = await call_model(run, model, messages, specs, settings, streamer=streamer, turn=turn)
    except Exception as exc:
        err = model_error(exc, model, user_errors_as_is=user_errors_as_is)
        run.fail(err)
        raise err from exc
    finally:
        took = time.perf_counter() - started
        if progress:
            run.emit(ProgressChunk(agent=agent, data=ProgressData(
                phase="end", what=progress, elapsed_ms=round(took * 1000, 1))))

    def announce(total: int) -> None:
        run.emit(UsageChunk(agent=agent, data=UsageData(
            prompt_tokens=reply.usage.prompt_tokens, completion_tokens=reply.usage.completion_tokens,
            model=model.name, session_total=total if total >= 0 else None)))

    t_guard = time.perf_counter()
    await run.count(reply.usage.total_tokens, announce=announce)
    reply.model_s, reply.guard_s = took, guard_s + time.perf_counter() - t_guard
    return reply


async def call_model(run: RunContext, model: Model, messages: list[Message], specs: list[ToolSpec],
                     settings: ModelSettings | None, *, streamer: Feed | None,
                     turn: int) -> ModelReply:
    """Stream one call. Text goes out as `delta` chunks as it arrives (through `streamer` for
    text codecs), a native call's arguments as `tool_call_delta` chunks while they form (none when
    the streamer `holds` the reply back); usage is the provider's, or counted with `count_tokens` when it gives none.
    A model's own waits (loading, reading the prompt, writing) go out as `progress` chunks."""
    agent = run.agent.name
    started = time.perf_counter()
    first_ms = 0.0
    got = Collector()
    forming = None if getattr(streamer, "holds", False) else FormingCalls(run, agent)  # held: nothing shows
    async for event in model.stream(messages, tools=specs, settings=settings):
        if isinstance(event, ProgressEvent):
            run.emit(ProgressChunk(agent=agent, data=ProgressData(
                phase="start", what=event.text, stage=event.stage, tokens=event.tokens)))
            continue
        if isinstance(event, ToolCallDelta):
            if forming is not None:
                forming.feed(event)
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
    if forming is not None:
        forming.close()
    text, calls, usage, finish = got.text, got.calls, got.usage, got.reason
    if usage is None:  # the provider did not say: count it ourselves
        prompt = count_text_tokens("\n".join(m.content for m in messages), model.name)
        usage = Usage(prompt, count_text_tokens(text, model.name) + 8 * len(calls))
    if run.tracing:
        run.trace_event("llm_call", model=model.name, turn=turn, tok_prompt=usage.prompt_tokens,
                        tok_completion=usage.completion_tokens, finish=finish, tool_calls=len(calls),
                        duration_ms=round((time.perf_counter() - started) * 1000, 3),
                        **_timing(usage, first_ms))
    return ModelReply(text, calls, usage, finish=finish)


class FormingCalls:
    """A native call's arguments as they stream, out as `tool_call_delta` chunks: each string
    argument's decoded growth (llm.partialargs), and when it is complete."""

    def __init__(self, run: RunContext, agent: str) -> None:
        self.run, self.agent = run, agent
        self.readers: dict[int, tuple[ArgsReader, list[str]]] = {}  # index → reader, [id, name]

    def feed(self, event: ToolCallDelta) -> None:
        reader, who = self.readers.setdefault(event.index, (ArgsReader(every_s=0.05), ["", ""]))
        who[0], who[1] = event.id or who[0] or f"call_{event.index}", event.name or who[1]
        self._emit(reader.feed(event.arguments), who)

    def close(self) -> None:
        for reader, who in self.readers.values():
            self._emit(reader.close(), who)
        self.readers.clear()

    def _emit(self, grown: list[Grown], who: list[str]) -> None:
        for g in grown:
            self.run.emit(ToolCallDeltaChunk(agent=self.agent, data=ToolCallDeltaData(
                id=who[0], name=who[1], key=g.key, text=g.text, done=g.done)))


def _timing(usage: Usage, first_ms: float) -> dict[str, float]:
    """An in-process model's own figures for the trace (none for a provider that gives none):
    prompt tokens evaluated (not reused), llama.cpp's prompt and generation time, the load, and
    the time to the first text."""
    if not (usage.prompt_ms or usage.gen_ms or usage.load_ms):
        return {}
    return {"tok_prompt_evaluated": usage.prompt_eval_tokens, "prompt_ms": usage.prompt_ms,
            "gen_ms": usage.gen_ms, "load_ms": usage.load_ms, "first_token_ms": round(first_ms, 1)}
