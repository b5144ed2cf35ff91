"""ScriptedModel: a Model that plays a script of replies, tool calls and failures, in order.

For users' tests and ours (like pydantic-ai's TestModel and openai-agents' scripted model)::

    model = ScriptedModel([
        reply("Let me look."),
        tool_call("read_file", path="a.py"),
        fail(LLMTimeoutError("slow")),
        lambda messages: reply(f"you said {messages[-1].content}"),
    ])

Each step is one model call. Every call's messages, tools and settings are recorded in
`.requests`; running past the end of the script raises `ScriptExhaustedError`.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

from duckflow.errors import UserError
from duckflow.llm.errors import LLMError, LLMServerError
from duckflow.llm.types import (
    FinishEvent,
    Message,
    ModelEvent,
    ModelSettings,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolCallEvent,
    ToolSpec,
    Usage,
    UsageEvent,
)


@dataclass
class ScriptStep:
    """One scripted model call: text (streamed in `chunks`), native tool calls, or a failure.

    `error` is raised after `text` (if any) was streamed: `fail(exc, partial="Hel")` fakes a
    stream that breaks midway.
    """

    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    usage: Usage | None = None
    chunks: list[str] | None = None
    error: BaseException | None = None
    finish_reason: str | None = None
    arg_pieces: int = 0  # > 0: each call's JSON arguments stream first, cut every this many characters

    def pieces(self) -> list[str]:
        if self.chunks is not None:
            return [c for c in self.chunks if c]
        return re.findall(r"\s*\S+\s*", self.text) if self.text.strip() else ([self.text] if self.text else [])


StepResult = Union[ScriptStep, str, ToolCall, list[ToolCall]]
DynamicStep = Callable[[list[Message]], Union[StepResult, Awaitable[StepResult]]]
Step = Union[ScriptStep, DynamicStep]


@dataclass
class ScriptedRequest:
    """What one call to the scripted model received."""

    messages: list[Message]
    tools: list[ToolSpec]
    settings: ModelSettings | None


class ScriptError(LLMError, UserError):
    """The script cannot answer this call: a mistake in the test, not a model failure.

    A UserError, so the agent reports it as it is (never as a generic model_error) and no
    retry or fallback replays it.
    """

    code = "script_error"


class ScriptExhaustedError(ScriptError):
    """The model was called more often than its script has steps."""

    code = "script_exhausted"


def reply(text: str, *, usage: Usage | None = None, chunks: Sequence[str] | None = None) -> ScriptStep:
    """A plain text answer, streamed word by word (or in the given `chunks`, which must join to `text`)."""
    if chunks is not None and "".join(chunks) != text:
        raise ValueError("reply(): chunks must join to exactly the text")
    return ScriptStep(text=text, usage=usage, chunks=list(chunks) if chunks is not None else None)


def streamed_call(name: str, /, *, every: int = 5, **arguments: Any) -> ScriptStep:
    """One native call whose JSON arguments stream in pieces of `every` characters (as a
    provider streams them; cuts fall inside escapes too), then the whole call."""
    return ScriptStep(calls=[ToolCall(name=name, arguments=dict(arguments))], arg_pieces=every)


def tool_call(name: str, /, **arguments: Any) -> ScriptStep:
    """One native tool call, e.g. `tool_call("read_file", path="a.py")`."""
    return ScriptStep(calls=[ToolCall(name=name, arguments=dict(arguments))])


def tool_calls(
    calls: Sequence[ToolCall | tuple[str, dict[str, Any]]],
    *,
    text: str = "",
    usage: Usage | None = None,
) -> ScriptStep:
    """Several native tool calls in one turn, optionally preceded by text."""
    built = [c if isinstance(c, ToolCall) else ToolCall(name=c[0], arguments=dict(c[1])) for c in calls]
    return ScriptStep(text=text, calls=built, usage=usage)


def fail(exc: BaseException | None = None, *, partial: str = "") -> ScriptStep:
    """A call that raises `exc` (default: a retryable LLMServerError), after streaming `partial`."""
    error = exc if exc is not None else LLMServerError("scripted failure", provider="scripted")
    return ScriptStep(text=partial, error=error)


def _estimate(text: str) -> int:
    return max(1, len(text) // 4) if text else 0


class ScriptedModel:
    """A Model whose answers are a script; see the module docstring."""

    def __init__(
        self,
        steps: Sequence[Step] = (),
        *,
        name: str = "model",
        supports_tools: bool = True,
        is_local: bool = True,
        delay_s: float = 0.0,
        vision: bool = False,
    ) -> None:
        self.steps: list[Step] = list(steps)
        self.vision = vision  # takes images (llm.vision): a test plays a vision model or one without
        self.name = name if name.startswith("scripted:") else f"scripted:{name}"
        self.supports_tools = supports_tools
        self.is_local = is_local
        self.delay_s = delay_s
        self.requests: list[ScriptedRequest] = []

    @property
    def remaining(self) -> int:
        """Steps not played yet."""
        return max(0, len(self.steps) - len(self.requests))

    def add(self, *steps: Step) -> ScriptedModel:
        """Append steps to the script (returns self)."""
        self.steps.extend(steps)
        return self

    async def _resolve(self, index: int, messages: list[Message]) -> ScriptStep:
        step = self.steps[index]
        if isinstance(step, ScriptStep):
            return step
        result = step(messages)
        if inspect.isawaitable(result):
            result = await result
        if isinstance(result, ScriptStep):
            return result
        if isinstance(result, str):
            return reply(result)
        if isinstance(result, ToolCall):
            return ScriptStep(calls=[result])
        if isinstance(result, list) and all(isinstance(c, ToolCall) for c in result):
            return ScriptStep(calls=list(result))
        raise TypeError(
            f"{self.name}: step {index + 1} returned {type(result).__name__}; "
            "return reply(...), tool_call(...), a str, a ToolCall or a list of ToolCalls"
        )

    async def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] = (),
        settings: ModelSettings | None = None,
    ) -> AsyncIterator[ModelEvent]:
        index = len(self.requests)
        msgs = list(messages)
        self.requests.append(ScriptedRequest(msgs, list(tools), settings))
        if index >= len(self.steps):
            raise ScriptExhaustedError(
                f"{self.name}: script exhausted after {len(self.steps)} steps (call {index + 1} has no step)",
                hint="add a reply(...) step for this call, or check why the agent called the model again",
                provider="scripted",
            )
        step = await self._resolve(index, msgs)
        if step.calls and not self.supports_tools:
            raise ScriptError(
                f"{self.name}: step {index + 1} scripts native tool calls but supports_tools=False",
                hint="script the codec's text (e.g. Sym-Ops) with reply(...) instead",
                provider="scripted",
            )
        for piece in step.pieces():
            if self.delay_s:
                await asyncio.sleep(self.delay_s)
            yield TextDelta(piece)
        if step.error is not None:
            raise step.error
        for n, call in enumerate(step.calls):
            if not call.id:
                call = ToolCall(
                    name=call.name,
                    arguments=call.arguments,
                    id=f"call_{index + 1}_{n + 1}",
                    executable=call.executable,
                    confidence=call.confidence,
                    source=call.source,
                    raw=call.raw,
                )
            if step.arg_pieces > 0:
                raw = json.dumps(call.arguments)
                for at in range(0, len(raw), step.arg_pieces):
                    if self.delay_s:
                        await asyncio.sleep(self.delay_s)
                    yield ToolCallDelta(n, raw[at:at + step.arg_pieces], call.id, call.name)
            yield ToolCallEvent(call)
        usage = step.usage
        if usage is None:
            prompt = sum(_estimate(m.content) for m in msgs)
            usage = Usage(prompt, _estimate(step.text) + 8 * len(step.calls))
        yield UsageEvent(usage)
        yield FinishEvent(step.finish_reason or ("tool_calls" if step.calls else "stop"))
