"""Duckflow Macro Language (seed 002): 🦆▶️[T/F/S/I:...]◀️🦆 macros, file aliases, ReAct replies.

Public API: `parse(text, tools=None, aliases=None) -> DmlResult`, `AliasTable`, `DMLCodec`,
`system_prompt(tools=None, language="en")`. See docs/protocols/dml.md.
"""

from __future__ import annotations

from duckflow.protocols.dml.aliases import AliasTable, UnknownAlias
from duckflow.protocols.dml.arguments import split_args
from duckflow.protocols.dml.codec import DMLCodec
from duckflow.protocols.dml.library import (
    instruction_text,
    instructions,
    state_meaning,
    state_variables,
)
from duckflow.protocols.dml.parser import DmlResult, Macro, parse
from duckflow.protocols.dml.prompt import DEFAULT_TOOLS, system_prompt, tool_usage

__all__ = [
    "DEFAULT_TOOLS",
    "AliasTable",
    "DMLCodec",
    "DmlResult",
    "Macro",
    "UnknownAlias",
    "instruction_text",
    "instructions",
    "parse",
    "split_args",
    "state_meaning",
    "state_variables",
    "system_prompt",
    "tool_usage",
]
