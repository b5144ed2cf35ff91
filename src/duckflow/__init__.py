"""Duckflow: a local-first, SDK-free agent framework and AI coding companion.

The public API is importable from here, e.g. `from duckflow import Agent, tool, ScriptedModel`.
Each name is imported on first use (so `import duckflow` imports nothing heavy) and again
under TYPE_CHECKING, so mypy and IDEs see the real types.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from duckflow._lazy import lazy_getattr

if TYPE_CHECKING:  # the lazy names below, for type checkers (`X as X` marks a re-export)
    from duckflow.channels.conversation import Conversation as Conversation
    from duckflow.core.agent import Agent as Agent
    from duckflow.core.chunks import Chunk as Chunk
    from duckflow.core.errors import CoreError as CoreError
    from duckflow.core.guardrails import Guardrail as Guardrail
    from duckflow.core.guardrails import GuardrailResult as GuardrailResult
    from duckflow.core.handoffs import handoff as handoff
    from duckflow.core.mcphub import McpHub as McpHub
    from duckflow.core.results import RunResult as RunResult
    from duckflow.core.session import Session as Session
    from duckflow.core.token_guard import TokenGuard as TokenGuard
    from duckflow.core.tools import Tool as Tool
    from duckflow.core.tools import ToolContext as ToolContext
    from duckflow.core.tools import tool as tool
    from duckflow.errors import ConfigError as ConfigError
    from duckflow.errors import DuckflowError as DuckflowError
    from duckflow.errors import UserError as UserError
    from duckflow.llm.registry import get_model as get_model
    from duckflow.llm.scripted import ScriptedModel as ScriptedModel
    from duckflow.llm.scripted import reply as reply
    from duckflow.llm.scripted import tool_call as tool_call
    from duckflow.llm.types import Message as Message
    from duckflow.llm.types import Model as Model
    from duckflow.llm.types import ModelSettings as ModelSettings
    from duckflow.llm.types import Usage as Usage
    from duckflow.mcp_config import McpServerConfig as McpServerConfig

from duckflow._version import __version__ as __version__

_EXPORTS = {
    "Agent": "duckflow.core.agent", "RunResult": "duckflow.core.results", "Session": "duckflow.core.session",
    "Tool": "duckflow.core.tools", "ToolContext": "duckflow.core.tools", "tool": "duckflow.core.tools",
    "handoff": "duckflow.core.handoffs", "Chunk": "duckflow.core.chunks",
    "Conversation": "duckflow.channels.conversation",
    "Guardrail": "duckflow.core.guardrails", "GuardrailResult": "duckflow.core.guardrails",
    "TokenGuard": "duckflow.core.token_guard",
    "ScriptedModel": "duckflow.llm.scripted", "reply": "duckflow.llm.scripted", "tool_call": "duckflow.llm.scripted",
    "Message": "duckflow.llm.types", "Model": "duckflow.llm.types", "ModelSettings": "duckflow.llm.types",
    "Usage": "duckflow.llm.types", "get_model": "duckflow.llm.registry",
    "DuckflowError": "duckflow.errors", "UserError": "duckflow.errors", "ConfigError": "duckflow.errors",
    "CoreError": "duckflow.core.errors",
    "McpHub": "duckflow.core.mcphub", "McpServerConfig": "duckflow.mcp_config",
}

__all__ = ["__version__", *sorted(_EXPORTS)]

__getattr__ = lazy_getattr(globals(), _EXPORTS)
