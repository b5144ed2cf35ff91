"""What every `duckflow` command shares: `-w/--workspace`, `--json`, time formatting, input reading.

One behaviour per thing, so commands agree with each other: every command takes
`-w/--workspace DIR` (main.py adds it to the commands that do not use a workspace, saying so),
`--json` prints one compact JSON object on one line (easy to pipe into `jq` or read line by
line), times are "3 min ago" and "2026-01-02 03:04", and messages go to stderr.
Errors are raised as `DuckflowError`; main.py's one handler prints them.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
import time
from pathlib import Path
from typing import Any, Literal

from duckflow.errors import DuckflowError

NOT_USED = "accepted by every command; this one does not use a workspace"


def add_workspace(parser: argparse.ArgumentParser, *, default: str | None = ".",
                  help: str | None = None, aliases: tuple[str, ...] = ()) -> None:
    """Add `-w/--workspace DIR` (plus `aliases`, e.g. an old `--root`) unless already there."""
    if "--workspace" in parser._option_string_actions:
        return
    shown = "the current folder" if default in (".", None) else default
    parser.add_argument("-w", "--workspace", *aliases, dest="workspace", default=default, metavar="DIR",
                        help=help or f"the workspace folder (default: {shown})")


def add_workspace_everywhere(parser: argparse.ArgumentParser) -> None:
    """main.py: give `-w/--workspace` to a command (and its subcommands) that lacks it."""
    add_workspace(parser, help=NOT_USED)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                add_workspace(sub, help=NOT_USED)


def add_model_options(parser: argparse.ArgumentParser) -> None:
    """`--model`, `--codec`, `--mode`: how the companion's model is chosen and writes (chat, run)."""
    parser.add_argument("--model", "-m", help="provider:model, or scripted:demo (no model needed)")
    parser.add_argument("--codec", choices=["symops", "dml", "native"],
                        help="how the model writes actions (default: companion.codec, symops)")
    parser.add_argument("--mode", choices=["auto", "single-call", "two-call"],
                        help="one constrained reply per step (small models) or the two-call turn; "
                             "auto picks single-call for small local models")


MODEL_FORMS = ("local:default (the bundled offline model), ollama:NAME, openai:NAME, anthropic:NAME, "
               "a .gguf file, or scripted:demo (no model); `duckflow models list` shows the offline models")


def model_arg(name: str | None) -> str | None:
    """`--model` checked before anything starts: one clear error for a name no provider serves
    (`foo:bar` would otherwise become an Ollama model that fails three times); a `.gguf` path
    becomes `local:PATH`."""
    if not name:
        return name
    from duckflow.llm.names import (
        _LOCAL_FAMILIES,
        PROVIDERS,
        UnknownModelError,
        normalize_model_name,
    )
    from duckflow.llm.registry import ROLES

    raw = name.strip()
    if raw.lower().endswith(".gguf") and not raw.lower().startswith("local:"):
        return f"local:{raw}"
    head, sep, rest = raw.partition(":")
    if head.lower() == "scripted":  # an unknown one is said by llm.registry, where they are built
        return raw
    if raw in ROLES or raw == "demo":
        return raw
    known = sep and head.lower() in PROVIDERS and rest
    if sep and not known and not _LOCAL_FAMILIES.match(raw):
        raise DuckflowError(f"unknown model '{raw}': no provider is called '{head}'", hint="use " + MODEL_FORMS)
    try:
        normalize_model_name(raw)
    except UnknownModelError:
        raise DuckflowError(f"unknown model '{raw}'", hint="use " + MODEL_FORMS) from None
    return raw


def print_json(obj: Any) -> None:
    """The one JSON style of the command line: compact, one line, UTF-8 as is."""
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, default=str) + "\n")


def note(message: str) -> None:
    """A message for the person that is not the command's output: to stderr."""
    print(message, file=sys.stderr)


def who(by: str | None = None) -> str:
    """Who is acting: `by` when given, else `cli:$USER`."""
    if by:
        return str(by)
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli:unknown"


def ago(ts: float, now: float | None = None) -> str:
    """How long ago `ts` (epoch seconds) was: "12 s ago", "3 min ago", "5 h ago", "2 d ago"."""
    s = max(0, int((time.time() if now is None else now) - ts))
    if s < 60:
        return f"{s} s ago"
    if s < 3600:
        return f"{s // 60} min ago"
    if s < 86400:
        return f"{s // 3600} h ago"
    return f"{s // 86400} d ago"


def when(ts: float, *, seconds: bool = False) -> str:
    """A local date and time: "2026-01-02 03:04" (with seconds: "...:05")."""
    return time.strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M", time.localtime(ts))


PIPE_LIMIT = 256 * 1024 * 1024


def _read_pipe(path: Path, name: str) -> bytes:
    """A pipe's bytes, up to PIPE_LIMIT (a pipe that never ends is refused, not read forever)."""
    chunks, size = [], 0
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            size += len(chunk)
            if size > PIPE_LIMIT:
                raise DuckflowError(f"{name} gives more than {PIPE_LIMIT >> 20} MB", hint="give a file instead")
            chunks.append(chunk)
    return b"".join(chunks)


def read_input(name: str, *, decode: Literal["strict", "surrogateescape"] = "strict",
               what: str = "file") -> str:
    """A file's text, or stdin's for `-`, read as bytes and decoded as UTF-8 (CRLF kept).

    `strict`: text that is not UTF-8 is a clear error (offsets then point into the text as
    written). `surrogateescape`: every byte stays recoverable (for filters such as sanitize).
    """
    if name == "-":
        buffer = getattr(sys.stdin, "buffer", None)  # a text-only stdin (embedding, tests) has none
        if buffer is None:
            return sys.stdin.read()
        data, label = buffer.read(), "stdin"
    else:
        path = Path(name)
        if path.is_dir():
            raise DuckflowError(f"{name} is a folder, not a {what}", hint="give one file, or - to read stdin")
        if path.is_fifo():  # a pipe, e.g. `<(cmd)` in the shell: read it like stdin
            data, label = _read_pipe(path, name), name
        elif not path.exists():
            raise DuckflowError(f"no such file: {name}", hint=f"give an existing {what}, or - to read stdin")
        elif not path.is_file():
            raise DuckflowError(f"{name} is not a regular file (a device or a socket)",
                                hint=f"give a {what}, or - to read stdin")
        else:
            try:
                data, label = path.read_bytes(), name
            except PermissionError:
                raise DuckflowError(f"cannot read {name}: permission denied",
                                    hint="check the file's permissions") from None
    try:
        return data.decode("utf-8", errors=decode)
    except UnicodeDecodeError as exc:
        raise DuckflowError(f"{label} is not UTF-8 text ({exc.reason})", hint="save it as UTF-8") from exc
