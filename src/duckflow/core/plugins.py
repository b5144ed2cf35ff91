"""Plugins: tools and agents that other installed packages register through entry points.

A package declares, in its pyproject.toml::

    [project.entry-points."duckflow.tools"]
    word_count = "my_pkg.tools:word_count"      # a Tool, a function, or a list of them
    [project.entry-points."duckflow.agents"]
    reviewer = "my_pkg.agents:make_reviewer"     # an Agent, or a function returning one

Entry points are listed without importing anything; a plugin's module is imported only when
the tool or agent is first used (see `ToolRegistry`). Agents are built from their entry points
by `core/agent_plugins.py`, which sits above `Agent` (this module sits below: the registry uses it).
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from duckflow.core.errors import CoreError
from duckflow.core.tools import Tool, as_tool

TOOLS_GROUP = "duckflow.tools"
AGENTS_GROUP = "duckflow.agents"


class PluginError(CoreError):
    """An entry point could not be loaded or does not hold a tool/agent."""

    code = "plugin"


def tool_entry_points() -> dict[str, EntryPoint]:
    """Entry points of group `duckflow.tools`, by name (later distributions do not override)."""
    return _by_name(entry_points(group=TOOLS_GROUP))


def agent_entry_points() -> dict[str, EntryPoint]:
    return _by_name(entry_points(group=AGENTS_GROUP))


def _by_name(eps: Iterable[EntryPoint]) -> dict[str, EntryPoint]:
    found: dict[str, EntryPoint] = {}
    for ep in eps:
        found.setdefault(ep.name, ep)
    return found


def load_entry_point(ep: EntryPoint) -> Any:
    try:
        return ep.load()
    except Exception as exc:
        dist = getattr(ep.dist, "name", None) or "an installed package"
        raise PluginError(f"plugin '{ep.name}' ({ep.value}) from {dist} failed to load: "
                          f"{type(exc).__name__}: {exc}",
                          hint=f"fix or uninstall {dist}") from exc


def tools_from_entry_point(ep: EntryPoint) -> list[Tool]:
    """The tools an entry point provides: a Tool, a function, or an iterable of those.

    A single function becomes one tool named after the entry point.
    """
    obj = load_entry_point(ep)
    if isinstance(obj, Tool):
        return [obj]
    if callable(obj) and not isinstance(obj, type):
        return [Tool.from_function(obj, name=ep.name)]
    if isinstance(obj, (list, tuple)):
        return [as_tool(item) for item in obj]
    raise PluginError(f"plugin '{ep.name}' ({ep.value}) is not a tool, a function or a list of them",
                      hint="point the entry point at a @tool function or a list of tools")


def load_tool_plugins() -> list[Tool]:
    """Every tool that installed plugins provide (imports each plugin module)."""
    tools: list[Tool] = []
    for ep in tool_entry_points().values():
        tools.extend(tools_from_entry_point(ep))
    return tools
