"""An MCP server's tools as engine Tools: their JSON schemas as given, their kind, bounded output.

Each tool is named `mcp__SERVER__TOOL` (the form Codex and Claude Code use, so names never
collide with the workspace tools: server-filesystem has its own `read_file`). Its kind decides
whether a call needs a person (`Tool.needs_approval`, the companion's gate): "read" when your
config says so (`kinds = {TOOL = "read"}`) or the server annotates it `readOnlyHint: true`;
otherwise it asks ("other"), and it counts as destructive (high risk, never auto-approved)
unless the server says `destructiveHint: false` — the protocol's own default for a tool that is
not read-only is destructive. What a server sends is bounded: at most `MAX_TOOLS` tools, each
description and schema capped (a larger schema leaves the tool out, said), and every result
cut at `max_output_chars` with a note naming the server and tool.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, cast

from duckflow.core.errors import ToolValidationError
from duckflow.core.tools import Tool, ToolContext

MAX_TOOLS = 64
MAX_DESCRIPTION = 1000
MAX_SCHEMA_CHARS = 16_000
_NAME = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    """`mcp__SERVER__TOOL`, only letters, digits, `_` and `-`, at most 64 characters."""
    return f"mcp__{_NAME.sub('_', server)}__{_NAME.sub('_', tool)}"[:64]


@dataclass(frozen=True, eq=False)
class McpTool(Tool):
    """A tool an MCP server offers; `fn(arguments)` calls it on the server."""

    server: str = ""
    remote: str = ""  # the tool's name on the server
    schema: Mapping[str, Any] | None = None
    destructive: bool = True

    @cached_property
    def json_schema(self) -> dict[str, Any]:
        schema = dict(self.schema or {})
        schema.setdefault("type", "object")
        schema.setdefault("properties", {})
        return schema

    def check(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """The arguments as an object with every required field (the server checks the rest)."""
        if arguments is not None and not isinstance(arguments, Mapping):
            raise ToolValidationError(f"invalid arguments for tool '{self.name}': not an object",
                                      tool=self.name, fields=["(arguments)"])
        args = dict(arguments or {})
        required = self.json_schema.get("required") or []
        missing = [str(f) for f in required if isinstance(f, str) and f not in args]
        if missing:
            expected = ", ".join(self.json_schema.get("properties", {})) or "no arguments"
            raise ToolValidationError(
                f"invalid arguments for tool '{self.name}': missing " + ", ".join(f"'{m}'" for m in missing),
                tool=self.name, fields=missing, hint=f"call {self.name} with: {expected}")
        return args

    def validate(self, arguments: Mapping[str, Any] | None) -> Any:
        return self.check(arguments)

    async def invoke(self, arguments: Mapping[str, Any] | None, ctx: ToolContext | None = None) -> Any:
        return await self.fn(self.check(arguments))


def kind_of(server_cfg: Any, name: str, annotations: Any) -> tuple[str, bool]:
    """(Tool.kind, destructive) from your config's `kinds`, else the server's annotations."""
    said = (getattr(server_cfg, "kinds", None) or {}).get(name)
    if said == "read":
        return "read", False
    read_only = getattr(annotations, "read_only_hint", None) is True
    destructive_hint = getattr(annotations, "destructive_hint", None)
    if said is None and read_only:
        return "read", False
    return "other", destructive_hint is not False


def make_tools(server: str, cfg: Any, listed: list[Any], problems: list[str],
               call: Callable[[str, dict[str, Any]], Awaitable[str]]) -> list[Tool]:
    """Engine Tools for the tools `listed` by `server` (`call(remote_name, args)` runs one)."""
    enabled = getattr(cfg, "enabled_tools", None)
    disabled = set(getattr(cfg, "disabled_tools", None) or ())
    chosen = [t for t in listed if (enabled is None or t.name in enabled) and t.name not in disabled]
    if len(chosen) > MAX_TOOLS:
        problems.append(f"MCP server '{server}' offers {len(chosen)} tools; the first {MAX_TOOLS} are used")
        chosen = chosen[:MAX_TOOLS]
    tools: list[Tool] = []
    seen: set[str] = set()
    for t in chosen:
        name = tool_name(server, str(t.name))
        schema = t.input_schema if isinstance(t.input_schema, dict) else {}
        if len(json.dumps(schema, default=str)) > MAX_SCHEMA_CHARS or name in seen:
            problems.append(f"MCP server '{server}': tool '{str(t.name)[:60]}' left out "
                            + ("(its schema is over 16,000 characters)" if name not in seen else "(a second tool of that name)"))
            continue
        seen.add(name)
        kind, destructive = kind_of(cfg, str(t.name), t.annotations)
        description = " ".join(str(t.description or t.title or t.name).split())[:MAX_DESCRIPTION]

        async def run(args: dict[str, Any], _remote: str = str(t.name)) -> str:
            return await call(_remote, args)

        tools.append(McpTool(
            name=name, description=f"(MCP server {server}) {description}", args_model=cast(Any, None),
            fn=run, is_async=True, kind=kind, server=server, remote=str(t.name), schema=schema,
            destructive=destructive))
    return tools


class McpToolError(Exception):
    """A tool's call failed on the server's side (its own error, a timeout, a dead server)."""


def result_text(server: str, tool: str, result: Any, limit: int) -> str:
    """A CallToolResult as text for the model: text blocks as they are, other blocks named,
    structured content as JSON when there is no text; cut at `limit` characters, said.
    An error result raises McpToolError with its text."""
    parts: list[str] = []
    for block in getattr(result, "content", None) or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(str(getattr(block, "text", "")))
        elif kind in ("image", "audio"):
            parts.append(f"[{kind} {getattr(block, 'mime_type', '')}, {len(str(getattr(block, 'data', '')))} base64 characters]")
        elif kind == "resource":
            res = getattr(block, "resource", None)
            parts.append(str(getattr(res, "text", None) or f"[resource {getattr(res, 'uri', '')}]"))
        elif kind == "resource_link":
            parts.append(f"[resource {getattr(block, 'uri', '')}]")
        else:
            parts.append(f"[{kind or 'unknown'} content]")
    text = "\n".join(parts)
    structured = getattr(result, "structured_content", None)
    if not text and structured is not None:
        text = json.dumps(structured, ensure_ascii=False, default=str)
    if len(text) > limit:  # said first: whoever shows only the start of a result still sees it
        text = (f"[output of MCP tool {tool} (server {server}) cut at {limit:,} of {len(text):,} characters]\n"
                + text[:limit])
    if getattr(result, "is_error", False):
        raise McpToolError(f"MCP tool {tool} (server {server}) reported an error: {text[:2000] or '(no text)'}")
    return text
