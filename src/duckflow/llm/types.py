"""Shared value types of model calls: messages, tool specs and calls, usage, stream events.

Plain dataclasses (no pydantic) so that every layer can import them cheaply. These are the
contracts between `llm/` (providers), `protocols/` (codecs) and `core/` (agents).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolSpec:
    """What a model is told about one tool: name, description, JSON schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})

    @property
    def param_names(self) -> list[str]:
        """Argument names in declaration order."""
        return list(self.parameters.get("properties", {}))

    @property
    def required(self) -> list[str]:
        return list(self.parameters.get("required", []))


@dataclass
class ToolCall:
    """A request to run one tool.

    `executable` is False for calls a codec found by guessing (never run without a person's
    consent); `confidence` and `source` say how the call was obtained.
    """

    name: str
    arguments: dict[str, Any]
    id: str = ""
    executable: bool = True
    confidence: float = 1.0
    source: str = "native"  # native | symops | dml | ...
    raw: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The one stored shape of a call (a pending approval, a plan's action, a chunk's `call`)."""
        return {"name": self.name, "arguments": self.arguments, "id": self.id,
                "executable": self.executable, "confidence": self.confidence, "source": self.source}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ToolCall:
        return cls(name=str(d["name"]), arguments=dict(d.get("arguments", {})), id=str(d.get("id", "")),
                   executable=bool(d.get("executable", True)), confidence=float(d.get("confidence", 1.0)),
                   source=str(d.get("source", "native")))


@dataclass
class ToolResult:
    """The outcome of one tool call, as sent back to the model."""

    call_id: str
    name: str
    content: str
    is_error: bool = False


@dataclass(frozen=True)
class ImagePart:
    """An image that goes with a user message's text (seed 003: image inputs).

    Providers send it in their own form: a data-URI `image_url` part (OpenAI-compatible), a
    base64 `image` block (Anthropic), an `images` entry (Ollama). `source_path` is for audits.
    """

    data: bytes
    media_type: str = "image/png"
    source_path: str = ""

    def base64(self) -> str:
        import base64

        return base64.b64encode(self.data).decode("ascii")

    def data_uri(self) -> str:
        return f"data:{self.media_type};base64,{self.base64()}"


@dataclass
class Message:
    """One chat message. Assistant messages may carry native tool calls; tool messages answer one.

    A user message's content parts are its text plus `images` (ImagePart), in that order.
    """

    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    images: list[ImagePart] = field(default_factory=list)


@dataclass
class Usage:
    """Tokens of one call (or a sum). In-process models also say where the time went:
    `prompt_eval_tokens` the prompt tokens actually evaluated (the rest reused from the KV
    cache), `prompt_ms` / `gen_ms` llama.cpp's own prompt and generation time, `load_ms` loading."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    prompt_eval_tokens: int = 0
    prompt_ms: float = 0.0
    gen_ms: float = 0.0
    load_ms: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.prompt_eval_tokens + other.prompt_eval_tokens,
            self.prompt_ms + other.prompt_ms,
            self.gen_ms + other.gen_ms,
            self.load_ms + other.load_ms,
        )


@dataclass(frozen=True)
class TextDelta:
    text: str
    kind: Literal["text"] = "text"


@dataclass(frozen=True)
class ToolCallEvent:
    """A complete native tool call (providers assemble streamed argument fragments first)."""

    call: ToolCall
    kind: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True)
class ToolCallDelta:
    """A piece of a native tool call as it streams: the raw JSON text of its `arguments` (a
    fragment, escapes may be split across pieces), keyed by `index`; `id` and `name` once known.
    Only to show the call as it forms: the complete `ToolCallEvent` follows and is what runs."""

    index: int
    arguments: str
    id: str = ""
    name: str = ""
    kind: Literal["tool_call_delta"] = "tool_call_delta"


@dataclass(frozen=True)
class UsageEvent:
    usage: Usage
    kind: Literal["usage"] = "usage"


@dataclass(frozen=True)
class FinishEvent:
    reason: str = "stop"  # stop | tool_calls | length | error
    kind: Literal["finish"] = "finish"


@dataclass(frozen=True)
class ProgressEvent:
    """What the model is doing before and while text arrives: `stage` is `loading`, `prompt`
    (reading `tokens` prompt tokens) or `writing`; `text` says it in plain words."""

    stage: str
    text: str
    tokens: int = 0
    detail: str = ""
    kind: Literal["progress"] = "progress"


ModelEvent = TextDelta | ToolCallEvent | ToolCallDelta | UsageEvent | FinishEvent | ProgressEvent


@dataclass
class ModelSettings:
    """Per-call settings; None means "the provider's own" (e.g. `timeout_s`: the model's timeout)."""

    temperature: float | None = None
    max_tokens: int | None = None
    timeout_s: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class ModelResponse:
    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    finish_reason: str = "stop"


@runtime_checkable
class Model(Protocol):
    """What every provider (and ScriptedModel) implements.

    `name` is normalised `provider:model`. `supports_tools` says whether native tool calling
    is available; `is_local` says whether text stays on this machine (the sanitizer is applied
    to everything that is not local).
    """

    name: str
    supports_tools: bool
    is_local: bool

    def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] = (),
        settings: ModelSettings | None = None,
    ) -> AsyncIterator[ModelEvent]: ...


class Collector:
    """Gathers a stream's events into one reply: the one place that reads event types."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self._packed: list[str] = []  # many small pieces: one string per 4096 (memory near the text)
        self.calls: list[ToolCall] = []
        self.usage: Usage | None = None  # None: the provider reported none
        self.reason = "stop"

    def add(self, event: ModelEvent) -> str:
        """Take one event; returns its text ('' for events that carry none)."""
        match event:
            case TextDelta(text=text):
                self.parts.append(text)
                if len(self.parts) > 4096:
                    self._packed.append("".join(self.parts))
                    self.parts.clear()
                return text
            case ToolCallEvent(call=call):
                self.calls.append(call)
            case UsageEvent(usage=usage):
                self.usage = usage if self.usage is None else self.usage + usage
            case FinishEvent(reason=reason):
                self.reason = reason
        return ""

    @property
    def text(self) -> str:
        return "".join(self._packed) + "".join(self.parts) if self._packed else "".join(self.parts)

    def response(self, model: str = "") -> ModelResponse:
        return ModelResponse(self.text, self.calls, self.usage or Usage(), model, self.reason)


async def collect(events: AsyncIterator[ModelEvent], model: str = "") -> ModelResponse:
    """Consume a stream of events into one ModelResponse."""
    collector = Collector()
    async for ev in events:
        collector.add(ev)
    return collector.response(model)


async def complete(
    model: Model,
    messages: Sequence[Message],
    *,
    tools: Sequence[ToolSpec] = (),
    settings: ModelSettings | None = None,
) -> ModelResponse:
    """One non-streaming call: the stream, collected."""
    return await collect(model.stream(messages, tools=tools, settings=settings), model.name)
