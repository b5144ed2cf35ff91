"""OpenAI-compatible chat completions over httpx, streamed (OpenAI, OpenRouter, vLLM, LM Studio,
llama.cpp server, Ollama's /v1).

Wire format: POST {base_url}/chat/completions with `stream: true` and
`stream_options.include_usage`; the answer is server-sent events `data: {chunk}` ending with
`data: [DONE]` (OpenAI API reference, "Create chat completion" / "The chat completion chunk
object"). Tool-call arguments arrive as string fragments keyed by `index`: each is passed on as a
`ToolCallDelta` (the call shown as it forms) and the call is assembled here.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from duckflow.llm.errors import LLMError, LLMProviderError, LLMServerError, error_for_status
from duckflow.llm.http import cut_stream, iter_sse, not_a_stream, open_stream
from duckflow.llm.payloads import (
    OAChoice,
    OAChunk,
    OADelta,
    OAFunction,
    OAMessage,
    OAUsage,
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
from duckflow.llm.wire import openai_tools, parse_arguments


def to_openai_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Our messages in the chat-completions shape (assistant tool_calls, tool messages)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "tool":
            out.append({"role": "tool", "tool_call_id": m.tool_call_id or "", "content": m.content})
        elif m.role == "assistant" and m.tool_calls:
            out.append({
                "role": "assistant",
                "content": m.content or None,
                "tool_calls": [
                    {"id": c.id or f"call_{i}", "type": "function",
                     "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                    for i, c in enumerate(m.tool_calls)
                ],
            })
        else:
            item: dict[str, Any] = {"role": m.role, "content": m.content}
            if m.images:  # content parts: the text, then each image as a data-URI image_url
                item["content"] = [{"type": "text", "text": m.content}] + [
                    {"type": "image_url", "image_url": {"url": img.data_uri()}} for img in m.images]
            if m.name:
                item["name"] = m.name
            out.append(item)
    return out


@dataclass
class _PendingCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


_FINISH = {"tool_calls": "tool_calls", "function_call": "tool_calls", "length": "length"}


class OpenAICompatModel(HTTPModel):
    """Any server that speaks OpenAI chat completions; `base_url` ends before `/chat/completions`."""

    provider = "openai"
    default_base_url = "https://api.openai.com/v1"

    def __init__(self, model: str, *, provider: str | None = None, **kw: Any) -> None:
        if provider:
            self.provider = provider
        super().__init__(model, **kw)

    def payload(self, messages: list[Message], tools: list[ToolSpec], settings: ModelSettings) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": to_openai_messages(messages),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tools and self.supports_tools:
            body["tools"] = openai_tools(tools)
        if settings.temperature is not None:
            body["temperature"] = settings.temperature
        if settings.max_tokens is not None:
            body["max_tokens"] = settings.max_tokens
        body.update(settings.extra)
        return body

    async def _stream(
        self, messages: list[Message], tools: list[ToolSpec], settings: ModelSettings
    ) -> AsyncIterator[ModelEvent]:
        url = f"{self.base_url}/chat/completions"
        pending: dict[int, _PendingCall] = {}
        finish: str | None = None
        done = False
        events = 0
        junk: list[str] = []
        async with open_stream(url, self.payload(messages, tools, settings), headers=self._headers(),
                               provider=self.name, timeout_s=self._timeout(settings)) as lines:
            async for _event, data in iter_sse(lines, junk):
                events += 1
                if data.strip() == "[DONE]":
                    done = True
                    break
                chunk = load_event(data, self.name)
                if isinstance(chunk, dict) and "error" in chunk:
                    raise _stream_error(chunk["error"], self.name)
                valid = validate(OAChunk, chunk, self.name, "chunk")
                for choice in valid.choices or []:
                    delta = choice.delta or OADelta()
                    if delta.content:
                        yield TextDelta(delta.content)
                    for frag in delta.tool_calls or []:
                        key = frag.index if frag.index is not None else len(pending)
                        call = pending.setdefault(key, _PendingCall())
                        call.id = frag.id or call.id
                        fn = frag.function or OAFunction()
                        call.name = fn.name or call.name
                        if fn.arguments:
                            call.arguments.append(fn.arguments)
                            yield ToolCallDelta(key, fn.arguments, call.id, call.name)  # shown as it forms
                    if choice.finish_reason:
                        finish = choice.finish_reason
                if valid.usage:
                    yield UsageEvent(Usage(valid.usage.prompt_tokens or 0,
                                           valid.usage.completion_tokens or 0))
        if not done and finish is None and not events and junk:
            # a server that ignored `stream: true` and sent one JSON completion (or an error)
            async for ev in self._whole_body("\n".join(junk)):
                yield ev
            return
        if not done and finish is None:
            raise cut_stream(self.name, "[DONE]")
        for index in sorted(pending):
            call = pending[index]
            raw, cid = "".join(call.arguments), call.id or f"call_{index}"
            yield ToolCallEvent(checked_call(partial(parse_arguments, call.name, raw, cid), self.name))
        reason = _FINISH.get(finish or "", "stop")
        if pending and reason == "stop":
            reason = "tool_calls"
        yield FinishEvent(reason)


    async def _whole_body(self, body: str) -> AsyncIterator[ModelEvent]:
        """Events from a non-streamed chat completion body; anything else is LLMResponseError."""
        try:
            data = load_event(body, self.name)
        except LLMProviderError as exc:
            if "invalid JSON" in exc.message:
                raise not_a_stream(self.name, [body]) from None
            raise
        if isinstance(data, dict) and "error" in data:
            raise _stream_error(data["error"], self.name)
        if not isinstance(data, dict) or not isinstance(data.get("choices"), list) or not data["choices"]:
            raise not_a_stream(self.name, [body])
        valid = validate(OAChunk, data, self.name, "completion")
        choice = (valid.choices or [OAChoice()])[0]
        msg = choice.message or OAMessage()
        if msg.content:
            yield TextDelta(msg.content)
        calls = msg.tool_calls or []
        for i, tc in enumerate(calls):
            fn = tc.function or OAFunction()
            yield ToolCallEvent(checked_call(
                partial(parse_arguments, fn.name or "", fn.arguments or "", tc.id or f"call_{i}"),
                self.name))
        usage = valid.usage or OAUsage()
        yield UsageEvent(Usage(usage.prompt_tokens or 0, usage.completion_tokens or 0))
        reason = _FINISH.get(choice.finish_reason or "", "stop")
        yield FinishEvent("tool_calls" if calls else reason)


def _stream_error(err: Any, provider: str) -> LLMError:
    """An `{"error": ...}` object sent inside the stream."""
    if isinstance(err, dict):
        msg = str(err.get("message") or err)
        code = err.get("code")
        if isinstance(code, int) or (isinstance(code, str) and code.isdigit()):
            return error_for_status(int(code), msg, provider=provider)
        return LLMServerError(f"{provider}: error in stream: {msg}", provider=provider)
    return LLMServerError(f"{provider}: error in stream: {err}", provider=provider)
