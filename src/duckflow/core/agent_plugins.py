"""Plugin agents: the `duckflow.agents` entry points built into `Agent`s (core/plugins.py lists them)."""

from __future__ import annotations

from duckflow.core.agent import Agent
from duckflow.core.plugins import PluginError, agent_entry_points, load_entry_point


def load_agent(name: str) -> Agent:
    """The agent registered under `name` (an Agent object, or a factory called with no args)."""
    eps = agent_entry_points()
    if name not in eps:
        raise PluginError(f"no plugin agent named '{name}'",
                          hint="installed: " + (", ".join(sorted(eps)) or "none"))
    obj = load_entry_point(eps[name])
    agent = obj
    if not isinstance(obj, Agent) and callable(obj):
        try:
            agent = obj()
        except Exception as exc:
            raise PluginError(f"plugin agent '{name}' ({eps[name].value}) failed to build: "
                              f"{type(exc).__name__}: {exc}", hint="fix or uninstall the plugin") from exc
    if not isinstance(agent, Agent):
        raise PluginError(f"plugin agent '{name}' ({eps[name].value}) did not give an Agent",
                          hint="point the entry point at an Agent or a function returning one")
    return agent


def load_agent_plugins() -> dict[str, Agent]:
    return {name: load_agent(name) for name in agent_entry_points()}
