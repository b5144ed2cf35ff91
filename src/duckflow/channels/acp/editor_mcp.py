"""The MCP servers an editor hands a session (`mcpServers` of session/new and session/load), as your config's.

ACP lets the editor pass the MCP servers the person set up there; Duckflow starts them as it
starts the `[mcp_servers]` of your own config (mcp_config.py: stdio `command`/`args`/`env`,
streamable HTTP `url`/`headers`) — the editor's settings are the person's, like that file. Their
tools then pass the same gate as any: a tool the server marks read-only runs unasked, the rest
show the approval. A server of yours with the same name wins. ACP gives no timeouts, so an
editor's server gets STARTUP_S to start and the call timeout of mcp_config.py. SSE and ACP-transport servers are
not taken (the MCP client speaks stdio and streamable HTTP); each one left out is said in a line.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from duckflow.config import Config, load_config

STARTUP_S = 30.0  # an editor's server may start slowly (npx fetching a package); yours keep their own


def _name(raw: str, taken: set[str]) -> str:
    name = re.sub(r"[^A-Za-z0-9_-]+", "_", raw).strip("_")[:40] or "editor"
    base, n = name, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    return name


def with_editor_servers(root: Path, servers: list[Any] | None) -> tuple[Config | None, list[str]]:
    """The workspace's config with the editor's servers added (None when it gave none), and a
    line for each server left out."""
    if not servers:
        return None, []
    from duckflow.mcp_config import McpServerConfig

    cfg = load_config(root)
    added: dict[str, McpServerConfig] = {}
    left_out: list[str] = []
    taken = set(cfg.mcp_servers)
    for server in servers:
        kind = getattr(server, "type", None)
        raw = str(getattr(server, "name", "") or "editor")
        try:
            if getattr(server, "command", None) and kind in (None, "stdio"):
                conf = McpServerConfig.model_validate({
                    "command": server.command, "args": list(server.args or []),
                    "env": {e.name: e.value for e in server.env or []}, "startup_timeout_sec": STARTUP_S})
            elif kind == "http" and getattr(server, "url", None):
                conf = McpServerConfig.model_validate({
                    "url": server.url, "headers": {h.name: h.value for h in server.headers or []},
                    "startup_timeout_sec": STARTUP_S})
            else:
                left_out.append(f"the editor's MCP server {raw} was not started: Duckflow speaks MCP over "
                                "stdio and streamable HTTP, not " + str(kind or "this transport"))
                continue
        except ValueError as exc:
            left_out.append(f"the editor's MCP server {raw} was not started: {' '.join(str(exc).split())[:200]}")
            continue
        if raw in cfg.mcp_servers:  # yours wins
            continue
        name = _name(raw, taken)
        taken.add(name)
        added[name] = conf
    if not added:
        return None, left_out
    return cfg.model_copy(update={"mcp_servers": {**cfg.mcp_servers, **added}}), left_out
