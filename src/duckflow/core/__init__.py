"""The engine core: Agent run/stream, Tool, ToolRegistry, guards, chunks, traces, memory.

Names are imported lazily so that `import duckflow.core` (and every `duckflow.core.x` import)
stays cheap; the same names are imported under TYPE_CHECKING so type checkers see them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from duckflow._lazy import lazy_getattr

if TYPE_CHECKING:  # the lazy names below, for type checkers (`X as X` marks a re-export)
    from duckflow.core.agent import Agent as Agent
    from duckflow.core.agent_plugins import load_agent as load_agent
    from duckflow.core.chunks import Chunk as Chunk
    from duckflow.core.chunks import SessionSequence as SessionSequence
    from duckflow.core.chunks import parse_chunk as parse_chunk
    from duckflow.core.errors import CoreError as CoreError
    from duckflow.core.errors import GuardrailTripped as GuardrailTripped
    from duckflow.core.errors import HandoffDepthExceeded as HandoffDepthExceeded
    from duckflow.core.errors import MaxTurnsExceeded as MaxTurnsExceeded
    from duckflow.core.errors import ModelCallError as ModelCallError
    from duckflow.core.errors import TokenBudgetExceeded as TokenBudgetExceeded
    from duckflow.core.errors import ToolNotFoundError as ToolNotFoundError
    from duckflow.core.errors import ToolValidationError as ToolValidationError
    from duckflow.core.guardrails import Guardrail as Guardrail
    from duckflow.core.guardrails import GuardrailResult as GuardrailResult
    from duckflow.core.handoffs import handoff as handoff
    from duckflow.core.native_codec import NativeCodec as NativeCodec
    from duckflow.core.plugins import PluginError as PluginError
    from duckflow.core.plugins import load_tool_plugins as load_tool_plugins
    from duckflow.core.registry import LoadedTool as LoadedTool
    from duckflow.core.registry import ToolRegistry as ToolRegistry
    from duckflow.core.results import AgentOutcome as AgentOutcome
    from duckflow.core.results import RunResult as RunResult
    from duckflow.core.session import Session as Session
    from duckflow.core.token_guard import MemoryCounter as MemoryCounter
    from duckflow.core.token_guard import RedisCounter as RedisCounter
    from duckflow.core.token_guard import SQLiteCounter as SQLiteCounter
    from duckflow.core.token_guard import TokenGuard as TokenGuard
    from duckflow.core.token_guard import TokenStatus as TokenStatus
    from duckflow.core.tools import Approval as Approval
    from duckflow.core.tools import Tool as Tool
    from duckflow.core.tools import ToolContext as ToolContext
    from duckflow.core.tools import tool as tool
    from duckflow.core.trace import NullTrace as NullTrace
    from duckflow.core.trace import TraceLogger as TraceLogger
    from duckflow.errors import UserError as UserError

_M = "duckflow.core."
_EXPORTS = {
    "Tool": _M + "tools", "ToolContext": _M + "tools", "tool": _M + "tools", "Approval": _M + "tools",
    "ToolRegistry": _M + "registry", "LoadedTool": _M + "registry",
    "Chunk": _M + "chunks", "SessionSequence": _M + "chunks", "parse_chunk": _M + "chunks",
    "Agent": _M + "agent", "RunResult": _M + "results", "AgentOutcome": _M + "results",
    "Session": _M + "session", "handoff": _M + "handoffs",
    "Guardrail": _M + "guardrails", "GuardrailResult": _M + "guardrails",
    "TokenGuard": _M + "token_guard", "TokenStatus": _M + "token_guard", "MemoryCounter": _M + "token_guard",
    "SQLiteCounter": _M + "token_guard", "RedisCounter": _M + "token_guard",
    "TraceLogger": _M + "trace", "NullTrace": _M + "trace",
    "PluginError": _M + "plugins", "load_agent": _M + "agent_plugins", "load_tool_plugins": _M + "plugins",
    "NativeCodec": _M + "native_codec",
    "CoreError": _M + "errors", "ToolNotFoundError": _M + "errors", "ModelCallError": _M + "errors",
    "ToolValidationError": _M + "errors", "HandoffDepthExceeded": _M + "errors",
    "MaxTurnsExceeded": _M + "errors", "GuardrailTripped": _M + "errors", "TokenBudgetExceeded": _M + "errors",
    "UserError": "duckflow.errors",
}

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_getattr(globals(), _EXPORTS)
