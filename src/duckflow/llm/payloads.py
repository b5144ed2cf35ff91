"""What a provider's payload must look like before any field is used: pydantic models per wire format.

Model output is attacker-controlled (a compromised or buggy server, a proxy, a prompt-injected
model). Every streamed event is parsed with `load_event` (bounded nesting: 100,000 brackets are
a `provider_error`, not a RecursionError) and validated here; what breaks the wire format
raises `LLMProviderError` — one line, retried like any provider failure. Harmless variants are
accepted: tool-call `arguments` as an object instead of a string, `content` as a list of text
parts. Shapes: OpenAI API reference "The chat completion chunk object" / "The chat completion
object"; Anthropic API reference "Streaming Messages"; Ollama API docs "Generate a chat completion" (streamed NDJSON objects).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictInt, StrictStr, ValidationError, field_validator

from duckflow.llm.errors import LLMProviderError
from duckflow.llm.nesting import MAX_DEPTH as MAX_DEPTH  # re-exported here
from duckflow.llm.nesting import nests_deeper as nests_deeper
from duckflow.llm.types import ToolCall


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore")


class TextPart(_Wire):
    text: StrictStr


def _joined(value: Any) -> Any:
    """`content` as a list of text parts (`[{"type": "text", "text": "hi"}]`) → one string."""
    if isinstance(value, list):
        return "".join(TextPart.model_validate(p).text for p in value)
    return value


def _as_text(value: Any) -> Any:
    """tool-call `arguments` as an object → its JSON text (what the stream normally sends)."""
    if isinstance(value, dict):
        return json.dumps(value)
    return value


class OAFunction(_Wire):
    name: StrictStr | None = None
    arguments: StrictStr | None = None

    _args = field_validator("arguments", mode="before")(_as_text)


class OAToolCallDelta(_Wire):
    index: StrictInt | None = None
    id: StrictStr | None = None
    function: OAFunction | None = None


class OADelta(_Wire):
    content: StrictStr | None = None
    tool_calls: list[OAToolCallDelta] | None = None

    _content = field_validator("content", mode="before")(_joined)


class OAMessage(OADelta):
    pass


class OAChoice(_Wire):
    index: StrictInt = 0
    delta: OADelta | None = None
    message: OAMessage | None = None
    finish_reason: StrictStr | None = None


class OAUsage(_Wire):
    prompt_tokens: StrictInt | None = 0
    completion_tokens: StrictInt | None = 0


class OAChunk(_Wire):
    """One streamed chat-completion chunk (or a whole non-streamed completion)."""

    choices: list[OAChoice] | None = None
    usage: OAUsage | None = None
    error: Any = None


class OllamaFunction(_Wire):
    name: StrictStr = ""
    arguments: dict[str, Any] | StrictStr | None = None


class OllamaToolCall(_Wire):
    id: StrictStr | None = None
    function: OllamaFunction | None = None


class OllamaMessage(_Wire):
    content: StrictStr | None = None
    tool_calls: list[OllamaToolCall] | None = None

    _content = field_validator("content", mode="before")(_joined)


class OllamaLine(_Wire):
    """One NDJSON object of Ollama's streamed /api/chat."""

    message: OllamaMessage | None = None
    done: bool = False
    done_reason: StrictStr | None = None
    prompt_eval_count: StrictInt | None = 0
    eval_count: StrictInt | None = 0
    error: Any = None


class AnUsage(_Wire):
    input_tokens: StrictInt | None = None
    output_tokens: StrictInt | None = None


class AnMessage(_Wire):
    usage: AnUsage | None = None


class AnBlock(_Wire):
    type: StrictStr = "text"
    text: StrictStr | None = None
    id: StrictStr | None = None
    name: StrictStr | None = None
    input: dict[str, Any] | None = None


class AnDelta(_Wire):
    type: StrictStr | None = None
    text: StrictStr | None = None
    partial_json: StrictStr | None = None
    stop_reason: StrictStr | None = None


class AnEvent(_Wire):
    """One server-sent event of Anthropic's streamed Messages API ("Streaming Messages")."""

    type: StrictStr | None = None
    index: StrictInt | None = None
    message: AnMessage | None = None
    content_block: AnBlock | None = None
    delta: AnDelta | None = None
    usage: AnUsage | None = None


def depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """How deeply `value` nests (dicts and lists), counting no further than `limit` + 1."""
    deepest = 0
    todo: list[tuple[Any, int]] = [(value, 1)]
    while todo:
        item, level = todo.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            if level > limit:
                return level
            todo.extend((v, level + 1) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def load_event(data: str, provider: str) -> Any:
    """One event's JSON, nesting bounded; too deep or not JSON raises LLMProviderError."""
    try:
        value = json.loads(data)
    except RecursionError:
        raise _too_deep(provider) from None
    except ValueError:
        raise LLMProviderError(f"{provider}: provider_error: the stream contained invalid JSON: "
                               f"{data[:120]!r}", provider=provider) from None
    if depth(value) > MAX_DEPTH:
        raise _too_deep(provider)
    return value


def _too_deep(provider: str) -> LLMProviderError:
    return LLMProviderError(f"{provider}: provider_error: an event nests deeper than {MAX_DEPTH} "
                            "levels; refused", provider=provider)


def validate(model: type[BaseModel], data: Any, provider: str, what: str) -> Any:
    """`data` as `model`; a payload that breaks the wire format raises LLMProviderError."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the payload"
        shown = json.dumps(first.get("input"), default=str)[:60]
        raise LLMProviderError(
            f"{provider}: provider_error: malformed {what}: {where}: {first['msg']} (got {shown})",
            provider=provider) from None


def checked_call(make: Callable[[], ToolCall], provider: str) -> ToolCall:
    """The ToolCall `make()` builds from the model's arguments, unless they nest deeper than
    MAX_DEPTH (100,000 brackets, say): then LLMProviderError instead of a RecursionError."""
    try:
        call = make()
    except RecursionError:
        raise _too_deep(provider) from None
    if depth(call.arguments) > MAX_DEPTH or (call.raw and nests_deeper(call.raw)):
        raise _too_deep(provider)
    return call
