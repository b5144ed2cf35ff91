"""Entry point of the `duckflow` command: dispatches to one command module, imported lazily.

Each command lives in its own module in this package and exposes two functions:

    def configure(parser: argparse.ArgumentParser) -> None   # add its arguments
    def run(args: argparse.Namespace) -> int                 # do the work, return exit code

Only the module of the command being run is imported, so `duckflow --help` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence

# name -> (module, one-line help). Order is the order shown in --help; DEVELOPER ones are listed apart.
COMMANDS: dict[str, tuple[str, str]] = {
    "chat": ("duckflow.channels.cli.chat_cmd", "talk with the coding companion in a folder"),
    "run": ("duckflow.channels.cli.run_cmd", "do one task end to end (asks before changing files)"),
    "undo": ("duckflow.channels.cli.undo_cmd", "put back the files as they were before a change"),
    "status": ("duckflow.channels.cli.status_cmd", "where the current task stands"),
    "sessions": ("duckflow.channels.cli.sessions_cmd", "list the saved conversations"),
    "approvals": ("duckflow.channels.cli.approvals_cmd", "list, show, grant or deny waiting changes"),
    "autoapprove": ("duckflow.channels.cli.autoapprove_cmd", "let some changes through without asking"),
    "models": ("duckflow.channels.cli.models_cmd", "install and list the bundled offline models"),
    "memory": ("duckflow.channels.cli.memory_cmd", "list or forget what the companion remembers"),
    "plugins": ("duckflow.channels.cli.plugins_cmd", "list the plugins your config declares and what they gave"),
    "config": ("duckflow.channels.cli.config_cmd", "show every setting and where it came from"),
    "serve": ("duckflow.channels.cli.serve_cmd", "the web page, HTTP API, Slack and LINE"),
    "acp": ("duckflow.channels.cli.acp_cmd", "be the agent of an editor (Zed, JetBrains, Neovim) over ACP"),
    "mcp": ("duckflow.channels.cli.mcp_cmd", "MCP servers: add, list, remove, allow; serve this workspace as one"),
    "essay": ("duckflow.channels.cli.essay_cmd", "essay agents: draft, style, check, eval"),
    "workspace": ("duckflow.channels.cli.workspace_cmd", "check what the workspace guard allows"),
    "sanitize": ("duckflow.channels.cli.sanitize_cmd", "mask secrets and personal data"),
    "protocol": ("duckflow.channels.cli.protocol_cmd", "parse, repair, render Sym-Ops/DML/JSON"),
    "bench": ("duckflow.channels.cli.bench_cmd", "run a benchmark and print figures"),
    "route": ("duckflow.channels.cli.route_cmd", "show where a message would be routed"),
    "events": ("duckflow.channels.cli.events_cmd", "list orchestration events (routing, loops, approvals)"),
}
DEVELOPER = ("workspace", "sanitize", "protocol", "bench", "route", "events")
EXAMPLES = """examples:
  duckflow chat                                 talk with the companion in this folder
  duckflow run "add a subtract function to calc.py"
  duckflow run "fix the failing test" -w ~/src/app --model ollama:qwen2.5-coder:7b
  duckflow chat --model scripted:demo           try it without any model
  duckflow undo                                 put back the last change"""


def _print_help() -> None:
    from duckflow import __version__

    width = max(len(n) for n in COMMANDS)
    lines = [f"duckflow {__version__} — a coding companion that asks before it changes your files", "",
             "usage: duckflow COMMAND [options]", "", EXAMPLES, "", "commands:"]
    lines += [f"  {name.ljust(width)}  {text}" for name, (_, text) in COMMANDS.items() if name not in DEVELOPER]
    lines += ["", "developer tools:"]
    lines += [f"  {name.ljust(width)}  {text}" for name, (_, text) in COMMANDS.items() if name in DEVELOPER]
    lines += ["", "Run `duckflow COMMAND --help` for the options of one command; --verbose on chat and run",
              "shows what the engine does (the protocol, steps, tool results)."]
    print("\n".join(lines))


# Exit codes (docs/cli.md): 0 ok, 1 an error the message explains, 2 bad usage, 3/4 refused by
# the workspace guard, 70 an internal error (a bug: rerun with --debug), 130 interrupted,
# 141 the reader of our output went away (`| head`).
EXIT_INTERNAL = 70
EXIT_BROKEN_PIPE = 141


def _debug_wanted(args: list[str]) -> bool:
    head = args[: args.index("--")] if "--" in args else args
    return "--debug" in head or os.environ.get("DUCKFLOW_DEBUG", "") not in ("", "0")


def _silence_stdout() -> None:
    """After EPIPE: point stdout at /dev/null so the exit-time flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def disable_pydantic_plugins() -> None:
    """No pydantic plugin runs inside the `duckflow` command (a user's own value is kept).

    Pydantic loads the entry points of its `pydantic` group from every installed distribution
    on the first model it builds, and a plugin sees every value validated: model output, tool
    arguments, secrets. Duckflow uses none; the scan of all installed metadata also cost ~27 M
    instructions (~1.5%) of a `duckflow run`. Set the variable yourself to choose otherwise.
    Commands the agent runs get an allow-listed environment without it (workspace.sandbox)."""
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")


def console() -> int:
    """The `duckflow` command ([project.scripts], `python -m duckflow`): `main` with a fast exit
    (cli/fastexit.py: the interpreter's teardown is skipped once everything is written)."""
    from duckflow import _gc
    from duckflow.channels.cli import fastexit

    _gc.pause_for_startup()  # until the command is set up (run: its first turn); see _gc.py
    fastexit.arm()
    code = main()
    fastexit.record(code)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; every failure becomes a one-line message and an exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    disable_pydantic_plugins()
    if args[:1] == ["--debug"]:
        os.environ["DUCKFLOW_DEBUG"] = "1"
        args = args[1:]
    debug = _debug_wanted(args)
    name = args[0] if args and not args[0].startswith("-") else "duckflow"
    prefix = "duckflow" if name == "duckflow" else f"duckflow {name}"
    from duckflow.errors import DuckflowError

    try:
        code = _dispatch(args)
        sys.stdout.flush()
        return code
    except DuckflowError as exc:
        if debug:
            traceback.print_exc()
        print(f"{prefix}: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"{prefix}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except SystemExit:
        raise
    except RecursionError:
        if debug:
            traceback.print_exc()
        print(f"{prefix}: the input is nested too deeply to read\n  next: flatten it or send "
              "a smaller piece", file=sys.stderr)
        return 1
    except MemoryError:
        print(f"{prefix}: out of memory\n  next: send a smaller input", file=sys.stderr)
        return 1
    except OSError as exc:
        if debug:
            traceback.print_exc()
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        print(f"{prefix}: {exc.strerror or _one_line(exc)}{where}\n  next: check the path and "
              "its permissions, or rerun with --debug", file=sys.stderr)
        return 1
    except Exception as exc:  # the one place a bug meets the user: one line, not a traceback
        if debug:
            traceback.print_exc()
        from duckflow.store.sqlite import damaged_database_error

        damaged = damaged_database_error(exc)  # a damaged state database is no bug: name it
        if damaged is not None:
            print(f"{prefix}: {damaged}", file=sys.stderr)
            return damaged.exit_code
        print(f"{prefix}: internal error: {type(exc).__name__}: {_one_line(exc)}\n  next: rerun "
              "with --debug (or DUCKFLOW_DEBUG=1) for the traceback and report it",
              file=sys.stderr)
        return EXIT_INTERNAL


def _dispatch(args: list[str]) -> int:
    if not args or args[0] in ("-h", "--help", "help"):
        _print_help()
        return 0
    if args[0] in ("-V", "--version"):
        from duckflow import __version__

        print(f"duckflow {__version__}")
        return 0
    name = args[0]
    if name not in COMMANDS:
        import difflib  # only for a mistyped command

        close = difflib.get_close_matches(name, COMMANDS, n=1)
        hint = f" Did you mean `duckflow {close[0]}`?" if close else ""
        print(f"duckflow: unknown command '{name}'.{hint} See `duckflow --help`.", file=sys.stderr)
        return 2
    from duckflow.paths import check_config_env

    check_config_env()  # a misspelled DUCKFLOW_CONFIG is said, not silently the defaults
    module_name, text = COMMANDS[name]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        print(f"duckflow: '{name}' is not available in this version yet.", file=sys.stderr)
        return 2
    from duckflow.channels.cli.common import add_workspace_everywhere

    parser = argparse.ArgumentParser(prog=f"duckflow {name}", description=text)
    module.configure(parser)
    add_workspace_everywhere(parser)  # every command takes -w/--workspace (common.py)
    try:  # every command takes --debug (a traceback on an error); some also use it themselves
        parser.add_argument("--debug", action="store_true",
                            help="show the traceback when something fails")
    except argparse.ArgumentError:
        pass
    ns = parser.parse_args(args[1:])
    from duckflow.channels.cli.logs import setup_logging

    setup_logging()
    from duckflow.channels.cli.pluginboot import load_at_start

    load_at_start(quiet=getattr(module, "QUIET_PLUGIN_ERRORS", False))  # [plugins] of your config
    if not getattr(module, "RESUMES_GC", False):
        from duckflow._gc import resume

        resume()  # a pause console() began ends here, unless the command ends it itself
    return int(module.run(ns))
