"""`duckflow mcp add|list|remove|allow|serve`: MCP servers whose tools Duckflow uses, and Duckflow as one.

add/remove edit `[mcp_servers.NAME]` in your config file (with tomlkit, so your comments and
layout stay); list shows yours and the ones the workspace's repository names (waiting for your
yes or allowed); allow gives that yes, bound to the exact command line; serve runs Duckflow's
own MCP server (channels/mcpserve/).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from duckflow.channels.cli.common import add_workspace, print_json
from duckflow.errors import DuckflowError, UserError
from duckflow.gate.mcptrust import shown

EXTRA = "pip install 'duckflow-agent[mcp]'"


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    add = sub.add_parser("add", help="add a server to your config: NAME -- COMMAND ARGS... or NAME --url URL")
    add.add_argument("name")
    add.add_argument("--url", help="a streamable HTTP server's URL (instead of a command)")
    add.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help="for the command (repeatable)")
    add.add_argument("--header", action="append", default=[], metavar="KEY=VALUE", help="for the URL (repeatable)")
    add.add_argument("command", nargs=argparse.REMAINDER, help="after --: the command and its arguments")
    ls = sub.add_parser("list", help="your servers and the ones this workspace names")
    add_workspace(ls)
    ls.add_argument("--json", action="store_true", help="print one JSON object")
    rm = sub.add_parser("remove", help="remove a server from your config")
    rm.add_argument("name")
    allow = sub.add_parser("allow", help="let a server the workspace's repository names start (your yes)")
    allow.add_argument("name")
    add_workspace(allow)
    serve = sub.add_parser("serve", help="offer this workspace's tools and the companion as an MCP server")
    add_workspace(serve)
    serve.add_argument("--http", type=int, metavar="PORT", help="streamable HTTP on 127.0.0.1:PORT (default: stdio)")
    serve.add_argument("--model", help="the companion's model for duckflow_task (default: as `duckflow run`)")


def run(args: argparse.Namespace) -> int:
    action = {"add": _add, "list": _list, "remove": _remove, "allow": _allow, "serve": _serve}[args.action]
    return action(args)


def _pairs(items: list[str], what: str) -> dict[str, str]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UserError(f"{what} '{item}' is not KEY=VALUE", hint=f"write it as --{what} NAME=VALUE")
        out[key] = value
    return out


def _options_before_dashes(args: argparse.Namespace) -> list[str]:
    """The command after `--`; --url/--env/--header written between NAME and `--` are read here
    (argparse hands everything after NAME to the command)."""
    rest = list(args.command)
    while rest and rest[0] != "--":
        flag, eq, value = rest[0].partition("=")
        if flag not in ("--url", "--env", "--header"):
            break  # no `--`: the command starts here
        if not eq:
            if len(rest) < 2:
                raise UserError(f"{flag} needs a value", hint="duckflow mcp add NAME --env KEY=VALUE -- COMMAND ARGS...")
            value = rest[1]
        rest = rest[1 if eq else 2:]
        if flag == "--url":
            args.url = value
        else:
            getattr(args, flag[2:]).append(value)
    return rest[1:] if rest[:1] == ["--"] else rest


def _document() -> tuple[Path, Any]:
    from duckflow.paths import config_file

    try:
        import tomlkit
    except ImportError:
        raise DuckflowError("editing the config needs tomlkit", hint=EXTRA) from None
    path = config_file()
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    try:
        return path, tomlkit.parse(text)
    except Exception as exc:
        raise DuckflowError(f"{path} is not valid TOML ({exc})", hint="fix it, then try again") from None


def _save(path: Path, doc: Any) -> None:
    import tomlkit

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".toml.tmp")
    tmp.write_text(tomlkit.dumps(doc), encoding="utf-8")
    tmp.replace(path)


def _add(args: argparse.Namespace) -> int:
    from duckflow.mcp_config import McpServerConfig

    command = _options_before_dashes(args)
    entry: dict[str, Any] = {}
    if args.url:
        entry["url"] = args.url
        if args.header:
            entry["headers"] = _pairs(args.header, "header")
    if command:
        entry.update(command=command[0], args=command[1:])
        if args.env:
            entry["env"] = _pairs(args.env, "env")
    try:
        server = McpServerConfig.model_validate(entry)
    except ValueError as exc:
        errors = getattr(exc, "errors", None)
        said = str(errors()[0]["msg"]).removeprefix("Value error, ") if callable(errors) else str(exc)
        raise UserError(f"cannot add '{args.name}': {said}",
                        hint=f"duckflow mcp add {args.name} -- COMMAND ARGS...  or  --url URL") from None
    import tomlkit

    path, doc = _document()
    table = doc.setdefault("mcp_servers", tomlkit.table(is_super_table=True))
    existed = args.name in table
    item = tomlkit.table()
    for key, value in entry.items():
        item[key] = value
    table[args.name] = item
    _save(path, doc)
    print(f"{'Replaced' if existed else 'Added'} MCP server '{args.name}' ({shown(server)}) in {path}. "
          "Its tools join the companion's from the next session.")
    return 0


def _remove(args: argparse.Namespace) -> int:
    path, doc = _document()
    table = doc.get("mcp_servers")
    if table is None or args.name not in table:
        raise UserError(f"there is no MCP server '{args.name}' in {path}", hint="see `duckflow mcp list`")
    del table[args.name]
    _save(path, doc)
    print(f"Removed MCP server '{args.name}' from {path}.")
    return 0


def _list(args: argparse.Namespace) -> int:
    from duckflow.config import load_config
    from duckflow.gate.mcptrust import servers_for
    from duckflow.paths import config_file

    root = Path(args.workspace).expanduser().resolve()
    cfg = load_config(root if root.is_dir() else None)
    found = servers_for(root, cfg) if root.is_dir() else None
    mine = cfg.mcp_servers
    repo = {n: s for n, s in (found.start.items() if found else ()) if n not in mine}
    waiting = found.waiting if found else {}
    if args.json:
        print_json({"yours": {n: {"transport": "http" if s.url else "stdio", "line": shown(s), "enabled": s.enabled}
                              for n, s in mine.items()},
                    "workspace_allowed": {n: shown(s) for n, s in repo.items()},
                    "workspace_waiting": {n: {"source": src, "line": shown(s)} for n, (src, s) in waiting.items()}})
        return 0
    lines = [f"Your MCP servers ({config_file()}):"] + (
        [f"  {n:<14} {'off: ' if not s.enabled else ''}{'http' if s.url else 'stdio'}: {shown(s)}"
         for n, s in mine.items()] or ["  none — add one with `duckflow mcp add NAME -- COMMAND ARGS...`"])
    if repo or waiting:
        lines.append(f"Named by the repository in {root}:")
        lines += [f"  {n:<14} allowed: {shown(s)}" for n, s in repo.items()]
        lines += [f"  {n:<14} {src}: {shown(s)} — not started; to allow it: duckflow mcp allow {n} -w {root}"
                  for n, (src, s) in waiting.items()]
    print("\n".join(lines))
    return 0


def _allow(args: argparse.Namespace) -> int:
    from duckflow.config import load_config
    from duckflow.gate.mcptrust import allow, repository_servers

    root = Path(args.workspace).expanduser().resolve()
    if not root.is_dir():
        raise UserError(f"workspace {root} is not a folder", hint="pass the repository's folder with -w DIR")
    named, _ = repository_servers(root, load_config(root))
    if args.name not in named:
        known = ", ".join(sorted(named)) or "none"
        raise UserError(f"the repository in {root} names no MCP server '{args.name}' (it names: {known})",
                        hint="see `duckflow mcp list -w DIR`")
    source, server = named[args.name]
    allow(root, args.name, server)
    print(f"Allowed '{args.name}' from {source} in {root}: {shown(server)}\n"
          "It starts with the next session here; if the repository changes this command, you are asked again.")
    return 0



def _serve(args: argparse.Namespace) -> int:
    from duckflow.channels.mcpserve.serve import serve

    return serve(Path(args.workspace), http_port=args.http, model=args.model)
