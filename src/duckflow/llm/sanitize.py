"""Masking of outgoing messages for cloud models, and restoring placeholders in what comes back.

Uses `duckflow.security.sanitizer.default_sanitizer()` (imported lazily). Cloud calls fail
closed: when the sanitizer cannot be loaded, nothing is sent.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, cast

from duckflow.llm.errors import LLMError
from duckflow.llm.types import Message, ModelEvent, TextDelta, ToolCall, ToolCallEvent


class MaskedText(Protocol):
    text: str
    mapping: dict[str, str]


class TextMasker(Protocol):
    """What a provider needs from `duckflow.security.sanitizer.Sanitizer`: `mask(text, mapping)`."""

    def mask(self, text: str, mapping: dict[str, str] | None = None) -> MaskedText: ...


def load_sanitizer() -> TextMasker:
    """The shared sanitizer; raises LLMError (fail closed) when it is not available."""
    try:
        from duckflow.security.sanitizer import default_sanitizer
    except ImportError as exc:  # pragma: no cover - only before the security module exists
        raise LLMError(
            "the secret sanitizer is not available, so nothing is sent to a cloud model",
            hint="use a local model, or reinstall duckflow-agent (duckflow.security.sanitizer is missing)",
            provider="sanitizer",
        ) from exc
    return cast(TextMasker, default_sanitizer())


@dataclass
class MaskedConversation:
    """Messages as sent to a cloud model, and the placeholder → original mapping."""

    messages: list[Message]
    mapping: dict[str, str] = field(default_factory=dict)
    findings: int = 0


def mask_messages(messages: list[Message], sanitizer: TextMasker | None = None) -> MaskedConversation:
    """Mask every message's text and every string in its tool-call arguments."""
    san = sanitizer or load_sanitizer()
    out = MaskedConversation([])

    def mask(text: str) -> str:
        if not text:
            return text
        # one mapping per request: numbering is per conversation, a placeholder never means two values
        masked = san.mask(text, out.mapping)
        if masked.text != text:
            out.findings += 1
        return masked.text

    def mask_value(value: Any) -> Any:
        if isinstance(value, str):
            return mask(value)
        if isinstance(value, dict):
            return {k: mask_value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [mask_value(v) for v in value]
        return value

    for msg in messages:
        calls = [replace(c, arguments=mask_value(c.arguments)) for c in msg.tool_calls]
        out.messages.append(replace(msg, content=mask(msg.content), tool_calls=calls))
    return out


def restore_value(value: Any, mapping: dict[str, str]) -> Any:
    """Put originals back for placeholders inside strings, dicts and lists (and un-escape the
    placeholder-like text that was in the original, see security/sanitizer.py)."""
    if isinstance(value, str):
        from duckflow.security.sanitizer import restore_text

        return restore_text(value, mapping)
    if isinstance(value, dict):
        return {k: restore_value(v, mapping) for k, v in value.items()}
    if isinstance(value, list):
        return [restore_value(v, mapping) for v in value]
    return value


class PlaceholderRestorer:
    """Restores placeholders in streamed text, holding back a tail that may be half a placeholder."""

    def __init__(self, mapping: dict[str, str]) -> None:
        self.mapping = mapping
        self._pending = ""

    def feed(self, text: str) -> str:
        from duckflow.security.sanitizer import partial_placeholder_start

        buf = self._pending + text
        cut = partial_placeholder_start(buf)
        self._pending = buf[cut:]
        return restore_value(buf[:cut], self.mapping)

    def flush(self) -> str:
        rest, self._pending = self._pending, ""
        return restore_value(rest, self.mapping)


async def restore_stream(events: AsyncIterator[ModelEvent], mapping: dict[str, str]) -> AsyncIterator[ModelEvent]:
    """The stream with placeholders in text and tool-call arguments replaced by the originals."""
    restorer = PlaceholderRestorer(mapping)
    async for ev in events:
        if isinstance(ev, TextDelta):
            text = restorer.feed(ev.text)
            if text:
                yield TextDelta(text)
            continue
        rest = restorer.flush()
        if rest:
            yield TextDelta(rest)
        if isinstance(ev, ToolCallEvent):
            call: ToolCall = ev.call
            yield ToolCallEvent(replace(call, arguments=restore_value(call.arguments, mapping)))
        else:
            yield ev
    rest = restorer.flush()
    if rest:
        yield TextDelta(rest)
