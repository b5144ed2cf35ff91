"""What every provider's wire format shares: tool definitions, tool-call arguments, headers.

One renderer per wire format: `openai_tools` (Chat Completions `tools`, also Ollama's
/api/chat, which takes the same shape) and `anthropic_tools` (Messages API). Providers feed
them `ToolSpec`s (an agent's `ToolRegistry.specs()`); nothing else renders tool definitions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from duckflow.llm.types import ToolCall, ToolSpec

AuthScheme = Literal["bearer", "x-api-key"]


def openai_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """`{"type": "function", "function": {name, description, parameters}}` per tool."""
    return [{"type": "function",
             "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
            for t in tools]


def anthropic_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """`{name, description, input_schema}` per tool."""
    return [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools]


def parse_arguments(name: str, raw: str | Mapping[str, Any], call_id: str) -> ToolCall:
    """A ToolCall from the model's arguments (a JSON string, or an object as Ollama sends them).

    Arguments that are not a JSON object give a non-executable call: it is shown, never run.
    """
    if isinstance(raw, Mapping):
        return ToolCall(name, dict(raw), call_id)
    try:
        args = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return ToolCall(name, {}, call_id, executable=False, confidence=0.0, raw=raw)
    if not isinstance(args, dict):
        return ToolCall(name, {}, call_id, executable=False, confidence=0.0, raw=raw)
    return ToolCall(name, args, call_id, raw=raw)


def headers(api_key: str | None, *, scheme: AuthScheme = "bearer", accept: str | None = None,
            fixed: Mapping[str, str] | None = None, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Request headers: `fixed` (e.g. a protocol version), Accept, the key, then the user's `extra`."""
    out = dict(fixed or {})
    if accept:
        out["Accept"] = accept
    if api_key:
        if scheme == "bearer":
            out["Authorization"] = f"Bearer {api_key}"
        else:
            out["x-api-key"] = api_key
    out.update(extra or {})
    return out
