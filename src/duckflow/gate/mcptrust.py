"""Which MCP servers a workspace may start: yours at once, a repository's only after your yes.

Your config's `[mcp_servers.NAME]` are yours. A repository can name servers too — Claude Code's
`.mcp.json` and its own `.duckflow/config.toml` — and a server is a program Duckflow would run
with your rights, so such a server never starts until you said yes to it: `duckflow mcp allow
NAME -w DIR`. The yes is kept in `<DUCKFLOW_HOME>/mcp_allowed.json`, bound to the workspace, the
name and the exact command line (or URL): a repository that changes the command asks again.
A server the repository names with the name of one of yours is left out (yours wins).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from duckflow.mcp_config import McpServerConfig, from_mcp_json

MCP_JSON = ".mcp.json"


@dataclass
class Servers:
    """The servers a session may start, and one line for each that it may not (and why)."""

    start: dict[str, McpServerConfig] = field(default_factory=dict)
    waiting: dict[str, tuple[str, McpServerConfig]] = field(default_factory=dict)  # name: (source, cfg)
    notes: list[str] = field(default_factory=list)


def shown(server: McpServerConfig) -> str:
    """A server's command line or URL for a person's screen: secrets in it (a token in `env`)
    masked by the sanitizer, the rest as is."""
    from duckflow.security.sanitizer import default_sanitizer

    return str(default_sanitizer().mask(server.line()).text)


def _trust_file() -> Path:
    from duckflow.paths import duckflow_home

    return duckflow_home() / "mcp_allowed.json"


def _key(root: str | Path, name: str, server: McpServerConfig) -> str:
    text = f"{Path(root).resolve()}\0{name}\0{server.line()}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _allowed_keys() -> set[str]:
    from duckflow.safe_read import read_regular

    try:
        data = json.loads(read_regular(_trust_file(), max_bytes=1_000_000).decode("utf-8"))
    except (OSError, ValueError):
        return set()
    return {str(k) for k in data.get("allowed", [])} if isinstance(data, dict) else set()


def allow(root: str | Path, name: str, server: McpServerConfig) -> None:
    """Record your yes for this workspace, name and command line."""
    keys = _allowed_keys() | {_key(root, name, server)}
    path = _trust_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"allowed": sorted(keys)}), encoding="utf-8")
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def repository_servers(root: str | Path, config: Any) -> tuple[dict[str, tuple[str, McpServerConfig]], list[str]]:
    """The servers the repository names ({name: (source file, config)}) and a line for each
    entry that cannot be read."""
    from duckflow.safe_read import read_inside

    found: dict[str, tuple[str, McpServerConfig]] = {}
    notes: list[str] = []
    for name, server in (getattr(config, "workspace_mcp_servers", None) or {}).items():
        found[name] = (".duckflow/config.toml", server)
    try:
        raw = read_inside(root, MCP_JSON, max_bytes=262_144)
    except FileNotFoundError:
        return found, notes
    except OSError as exc:
        return found, [f"{MCP_JSON} not read: {exc}"]
    try:
        entries = json.loads(raw.decode("utf-8")).get("mcpServers") or {}
        if not isinstance(entries, dict):
            raise ValueError("mcpServers is not an object")
    except (ValueError, AttributeError) as exc:
        return found, [f"{MCP_JSON} not read: not the expected JSON ({exc})"]
    for name, entry in entries.items():
        try:
            found.setdefault(str(name), (MCP_JSON, from_mcp_json(entry)))
        except ValueError as exc:
            notes.append(f"{MCP_JSON}: server '{name}' left out ({' '.join(str(exc).split())[:160]})")
    return found, notes


def servers_for(root: str | Path, config: Any, *, extra: Mapping[str, McpServerConfig] | None = None) -> Servers:
    """Your servers, and the repository's you allowed; the others wait for your yes."""
    out = Servers(start={n: s for n, s in (getattr(config, "mcp_servers", None) or {}).items() if s.enabled})
    if extra:
        out.start.update(extra)
    repo, out.notes = repository_servers(root, config)
    if not repo:
        return out
    keys = _allowed_keys()
    for name, (source, server) in repo.items():
        if name in out.start or name in (getattr(config, "mcp_servers", None) or {}):
            continue  # yours wins
        if _key(root, name, server) in keys:
            out.start[name] = server
        else:
            out.waiting[name] = (source, server)
            out.notes.append(f"The repository's {source} names the MCP server '{name}' ({shown(server)[:160]}); "
                             f"not started. To allow it: duckflow mcp allow {name} -w {Path(root).resolve()}")
    return out
