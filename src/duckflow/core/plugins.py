"""Plugins: tools and agents that other installed packages register through entry points.

A package declares, in its pyproject.toml::

    [project.entry-points."duckflow.tools"]
    word_count = "my_pkg.tools:word_count"      # a Tool, a function, or a list of them
    [project.entry-points."duckflow.agents"]
    reviewer = "my_pkg.agents:make_reviewer"     # an Agent, or a function returning one

Entry points are listed without importing anything; a plugin's module is imported only when
the tool or agent is first used (see `ToolRegistry`). Agents are built from their entry points
by `core/agent_plugins.py`, which sits above `Agent` (this module sits below: the registry uses it).

Plugins declared in the config (`[plugins] modules`, `entry_points`) are loaded at start by
`load_declared`: each one alone, so a failing plugin is named in one line and the rest run; the
tools they give are in `declared_tools()` (a `ToolRegistry(plugins=True)` includes them).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
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


@dataclass
class PluginStatus:
    """One declared plugin after loading: the tools it gave, or why it failed (one line)."""

    name: str
    kind: str  # "module" | "entry point"
    tools: list[str] = field(default_factory=list)
    error: str | None = None


_DECLARED: dict[str, Tool] = {}
_STATUS: list[PluginStatus] = []


def _module_tools(spec: str) -> list[Tool]:
    import importlib

    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
        if not attr:
            return [v for v in vars(module).values() if isinstance(v, Tool)]
        obj = getattr(module, attr)
    except Exception as exc:
        raise PluginError(f"{type(exc).__name__}: {exc}") from exc
    if isinstance(obj, (list, tuple)):
        return [as_tool(item) for item in obj]
    if isinstance(obj, Tool) or (callable(obj) and not isinstance(obj, type)):
        return [as_tool(obj)]
    raise PluginError(f"{spec} is not a tool, a function or a list of them")


def _installed(installed: dict[str, EntryPoint], name: str) -> EntryPoint:
    if name not in installed:
        raise PluginError(f"no installed package provides it (group {TOOLS_GROUP})")
    return installed[name]


def load_declared(modules: Iterable[str], entry_point_names: Iterable[str]) -> list[PluginStatus]:
    """Load every declared plugin, each on its own: one failing never stops the others."""
    _DECLARED.clear()
    _STATUS.clear()
    installed = tool_entry_points()
    wanted = list(entry_point_names)
    names = sorted(installed) if "*" in wanted else [n for n in wanted if n != "*"]
    jobs: list[tuple[str, str, Any]] = [(m, "module", lambda m=m: _module_tools(m)) for m in modules]
    for n in names:
        jobs.append((n, "entry point", lambda n=n: tools_from_entry_point(_installed(installed, n))))
    for name, kind, load in jobs:
        status = PluginStatus(name, kind)
        try:
            for t in load():
                _DECLARED.setdefault(t.name, t)
                status.tools.append(t.name)
        except Exception as exc:  # a plugin is someone else's code: any failure is named, not raised
            status.error = " ".join(str(getattr(exc, "message", exc)).split())[:300] or type(exc).__name__
        _STATUS.append(status)
    return list(_STATUS)


def declared_tools() -> dict[str, Tool]:
    """The tools the declared plugins gave (empty until `load_declared` ran)."""
    return dict(_DECLARED)


def declared_status() -> list[PluginStatus]:
    return list(_STATUS)

