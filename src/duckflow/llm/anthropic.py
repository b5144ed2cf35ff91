"""Anthropic Messages API over httpx, streamed (tool_use / tool_result blocks, SSE events).

Wire format (Anthropic docs, "Messages" and "Streaming Messages"): POST {base_url}/v1/messages
with headers `x-api-key` and `anthropic-version`; system text goes in the top-level `system`
field. The stream is `message_start`, then per content block `content_block_start` /
`content_block_delta` (`text_delta`, `input_json_delta`) / `content_block_stop`, then
`message_delta` (stop_reason, output usage) and `message_stop`; `ping` and `error` may come
at any point.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from functools import partial
from typing import Any

from duckflow.llm.errors import (
    LLMAuthError,
    LLMBadRequestError,
    LLMError,
    LLMRateLimitError,
    LLMServerError,
)
from duckflow.llm.http import cut_stream, iter_sse, not_a_stream, open_stream
from duckflow.llm.payloads import (
    AnBlock,
    AnDelta,
    AnEvent,
    AnUsage,
    checked_call,
    load_event,
    validate,
)
from duckflow.llm.provider import HTTPModel
from duckflow.llm.types import (
    FinishEvent,
    Message,
    ModelEvent,
    ModelSettings,
    TextDelta,
    ToolCallDelta,
    ToolCallEvent,
    ToolSpec,
    Usage,
    UsageEvent,
)
from duckflow.llm.wire import anthropic_tools, parse_arguments

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096


def to_anthropic(messages: list[Message]) -> tuple[str, list[dict[str, Any]]]:
    """(system text, messages as content blocks). Tool results join the next user turn."""
    system = "\n\n".join(m.content for m in messages if m.role == "system" and m.content)
    out: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for m in messages:
        if m.role == "system":
            continue
        if m.role == "tool":
            add("user", [{"type": "tool_result", "tool_use_id": m.tool_call_id or "",
                          "content": m.content}])
        elif m.role == "assistant":
            blocks: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content else []
            blocks += [{"type": "tool_use", "id": c.id or f"toolu_{i}", "name": c.name, "input": c.arguments}
                       for i, c in enumerate(m.tool_calls)]
            add("assistant", blocks)
        else:
            images = [{"type": "image", "source": {"type": "base64", "media_type": img.media_type,
                                                   "data": img.base64()}} for img in m.images]
            add("user", images + ([{"type": "text", "text": m.content}] if m.content else []))
    return system, out


_ERROR_TYPES: dict[str, type[LLMError]] = {
    "overloaded_error": LLMServerError,
    "api_error": LLMServerError,
    "rate_limit_error": LLMRateLimitError,
    "authentication_error": LLMAuthError,
    "permission_error": LLMAuthError,
    "invalid_request_error": LLMBadRequestError,
    "not_found_error": LLMBadRequestError,
}
_STOP = {"tool_use": "tool_calls", "max_tokens": "length"}


class AnthropicModel(HTTPModel):
    """Claude models through the Messages API."""

    provider = "anthropic"
    default_base_url = "https://api.anthropic.com"

    auth_scheme = "x-api-key"
    fixed_headers = {"anthropic-version": ANTHROPIC_VERSION}

    def payload(self, messages: list[Message], tools: list[ToolSpec], settings: ModelSettings) -> dict[str, Any]:
        system, msgs = to_anthropic(messages)
        body: dict[str, Any] = {
            "model": self.model,
            "messages": msgs,
            "max_tokens": settings.max_tokens or DEFAULT_MAX_TOKENS,
            "stream": True,
        }
        if system:
            body["system"] = system
        if tools and self.supports_tools:
            body["tools"] = anthropic_tools(tools)
        if settings.temperature is not None:
            body["temperature"] = settings.temperature
        body.update(settings.extra)
        return body

    async def _stream(
        self, messages: list[Message], tools: list[ToolSpec], settings: ModelSettings
    ) -> AsyncIterator[ModelEvent]:
        url = f"{self.base_url}/v1/messages"
        blocks: dict[int, dict[str, Any]] = {}
        usage = Usage()
        stop: str | None = None
        finished = False
        events = 0
        junk: list[str] = []
        async with open_stream(url, self.payload(messages, tools, settings), headers=self._headers(),
                               provider=self.name, timeout_s=self._timeout(settings)) as lines:
            async for event, data in iter_sse(lines, junk):
                events += 1
                body = load_event(data, self.name)
                kind = (body.get("type") if isinstance(body, dict) else None) or event
                if kind == "ping":
                    continue
                if kind == "error" and isinstance(body, dict):
                    raw_err = body.get("error")
                    err: dict[str, Any] = raw_err if isinstance(raw_err, dict) else {}
                    cls = _ERROR_TYPES.get(str(err.get("type")), LLMServerError)
                    raise cls(f"{self.name}: {err.get('type', 'error')}: {err.get('message', '')}",
                              provider=self.name)
                ev = validate(AnEvent, body, self.name, "event")
                if kind == "message_start":
                    u = (ev.message.usage if ev.message else None) or AnUsage()
                    usage = Usage(u.input_tokens or 0, u.output_tokens or 0)
                elif kind == "content_block_start":
                    block = (ev.content_block or AnBlock()).model_dump()
                    block["partial"] = []
                    blocks[ev.index if ev.index is not None else len(blocks)] = block
                    if block.get("type") == "text" and block.get("text"):
                        yield TextDelta(block["text"])
                elif kind == "content_block_delta":
                    delta = ev.delta or AnDelta()
                    block = blocks.setdefault(ev.index or 0, {"type": "text", "partial": []})
                    if delta.type == "text_delta" and delta.text:
                        yield TextDelta(delta.text)
                    elif delta.type == "input_json_delta":
                        block["partial"].append(delta.partial_json or "")
                        if delta.partial_json:  # shown as it forms
                            yield ToolCallDelta(ev.index or 0, delta.partial_json, block.get("id") or "",
                                                block.get("name") or "")
                elif kind == "content_block_stop":
                    block = blocks.get(ev.index if ev.index is not None else -1, {})
                    if block.get("type") == "tool_use":
                        raw = "".join(block["partial"])
                        name, cid = block.get("name") or "", block.get("id") or ""
                        if not raw and isinstance(block.get("input"), dict):
                            made = partial(parse_arguments, name, block["input"], cid)
                        else:
                            made = partial(parse_arguments, name, raw, cid)
                        yield ToolCallEvent(checked_call(made, self.name))
                elif kind == "message_delta":
                    stop = (ev.delta.stop_reason if ev.delta else None) or stop
                    u = ev.usage or AnUsage()
                    if u.output_tokens is not None:
                        usage = Usage(u.input_tokens if u.input_tokens is not None else usage.prompt_tokens,
                                      u.output_tokens)
                elif kind == "message_stop":
                    finished = True
                    break
        if not finished:
            raise not_a_stream(self.name, junk) if junk and not events else cut_stream(self.name, "message_stop")
        yield UsageEvent(usage)
        yield FinishEvent(_STOP.get(stop or "", "stop"))
