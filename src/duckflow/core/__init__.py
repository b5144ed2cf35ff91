"""The engine core: Agent run/stream, Tool, ToolRegistry, guards, chunks, traces, memory.

Names are imported lazily (module `__getattr__`) so that `import duckflow.core` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Tool": "tool", "ToolContext": "tool", "tool": "tool",
    "ToolRegistry": "registry", "LoadedTool": "registry",
    "Chunk": "chunks", "SessionSequence": "chunks",
    "Agent": "agent", "RunResult": "results", "AgentOutcome": "results", "Session": "session", "handoff": "handoff",
    "Guardrail": "guardrails", "GuardrailResult": "guardrails",
    "TokenGuard": "token_guard", "TokenStatus": "token_guard", "MemoryCounter": "token_guard",
    "SQLiteCounter": "token_guard", "RedisCounter": "token_guard",
    "parse_chunk": "chunks", "TraceLogger": "trace", "NullTrace": "trace",
    "PluginError": "plugins", "load_agent": "plugins", "load_tool_plugins": "plugins",
    "ToolNotFoundError": "errors", "ModelCallError": "errors", "CoreError": "errors",
    "NativeCodec": "native_codec",
    "ToolValidationError": "errors", "HandoffDepthExceeded": "errors",
    "MaxTurnsExceeded": "errors", "GuardrailTripped": "errors", "TokenBudgetExceeded": "errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'duckflow.core' has no attribute {name!r}")
    return getattr(importlib.import_module(f"duckflow.core.{module}"), name)
