"""Entry point of the `duckflow` command: dispatches to one command module, imported lazily.

Each command lives in its own module in this package and exposes two functions:

    def configure(parser: argparse.ArgumentParser) -> None   # add its arguments
    def run(args: argparse.Namespace) -> int                 # do the work, return exit code

Only the module of the command being run is imported, so `duckflow --help` stays fast.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import sys
from collections.abc import Sequence

# name -> (module, one-line help). Order is the order shown in --help.
COMMANDS: dict[str, tuple[str, str]] = {
    "chat": ("duckflow.channels.cli.chat_cmd", "talk with the coding companion in a workspace"),
    "run": ("duckflow.channels.cli.run_cmd", "run one task end to end, non-interactively"),
    "status": ("duckflow.channels.cli.status_cmd", "show the state of the current session"),
    "sessions": ("duckflow.channels.cli.sessions_cmd", "list saved companion sessions"),
    "undo": ("duckflow.channels.cli.undo_cmd", "restore the workspace before a change"),
    "approvals": ("duckflow.channels.cli.approvals_cmd", "list, show, grant or deny approvals"),
    "autoapprove": ("duckflow.channels.cli.autoapprove_cmd", "switch scoped auto-approve"),
    "workspace": ("duckflow.channels.cli.workspace_cmd", "check what the guard allows"),
    "sanitize": ("duckflow.channels.cli.sanitize_cmd", "mask secrets and personal data"),
    "protocol": ("duckflow.channels.cli.protocol_cmd", "parse, repair, render Sym-Ops/DML/JSON"),
    "bench": ("duckflow.channels.cli.bench_cmd", "run a benchmark and print figures"),
    "route": ("duckflow.channels.cli.route_cmd", "show where a message would be routed (seed 003)"),
    "config": ("duckflow.channels.cli.config_cmd", "show every effective setting and where it came from"),
    "essay": ("duckflow.channels.cli.essay_cmd", "SmartAO essay agents: draft, style, check, eval"),
}


def _print_help() -> None:
    from duckflow import __version__

    width = max(len(n) for n in COMMANDS)
    lines = [
        f"duckflow {__version__} — local-first agent framework and coding companion",
        "",
        "usage: duckflow COMMAND [options]",
        "",
        "commands:",
    ]
    lines += [f"  {name.ljust(width)}  {text}" for name, (_, text) in COMMANDS.items()]
    lines += ["", "Run `duckflow COMMAND --help` for the options of one command."]
    print("\n".join(lines))


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        _print_help()
        return 0
    if args[0] in ("-V", "--version"):
        from duckflow import __version__

        print(f"duckflow {__version__}")
        return 0
    name = args[0]
    if name not in COMMANDS:
        close = difflib.get_close_matches(name, COMMANDS, n=1)
        hint = f" Did you mean `duckflow {close[0]}`?" if close else ""
        print(f"duckflow: unknown command '{name}'.{hint} See `duckflow --help`.", file=sys.stderr)
        return 2
    module_name, text = COMMANDS[name]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        print(f"duckflow: '{name}' is not available in this version yet.", file=sys.stderr)
        return 2
    parser = argparse.ArgumentParser(prog=f"duckflow {name}", description=text)
    module.configure(parser)
    ns = parser.parse_args(args[1:])
    from duckflow.channels.cli.logs import setup_logging
    from duckflow.errors import DuckflowError

    setup_logging()

    try:
        return int(module.run(ns))
    except DuckflowError as exc:
        print(f"duckflow {name}: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"duckflow {name}: interrupted", file=sys.stderr)
        return 130
