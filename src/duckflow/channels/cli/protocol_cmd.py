"""`duckflow protocol`: parse, repair and render Sym-Ops / DML / JSON replies; print prompts.

    duckflow protocol parse --protocol {symops,dml,json} [--request TEXT] [FILE|-]
    duckflow protocol render --protocol symops FILE.json
    duckflow protocol repair [FILE|-]
    duckflow protocol prompt --protocol {symops,dml}

`parse` prints one JSON object (the shapes are in docs/protocols/symops.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from duckflow.errors import DuckflowError


class ProtocolInputError(DuckflowError):
    """An input file for `duckflow protocol` is missing or unreadable."""


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    p = sub.add_parser("parse", help="read a reply and print what it contains as JSON")
    p.add_argument("--protocol", choices=("symops", "dml", "json"), default="symops")
    p.add_argument("--request", default=None, help="the user's request (only for guesses)")
    p.add_argument("--debug", action="store_true", help="symops: show each stage on stderr")
    p.add_argument("file", nargs="?", default="-", help="reply file, or - for stdin")
    r = sub.add_parser("render", help="write canonical Sym-Ops for a parse result (JSON)")
    r.add_argument("--protocol", choices=("symops",), default="symops")
    r.add_argument("file", nargs="?", default="-", help="JSON file of a parse result, or -")
    f = sub.add_parser("repair", help="print the repaired Sym-Ops text of a reply")
    f.add_argument("file", nargs="?", default="-", help="reply file, or - for stdin")
    q = sub.add_parser("prompt", help="print the system prompt of a protocol")
    q.add_argument("--protocol", choices=("symops", "dml"), default="symops")


def _read(name: str) -> str:
    """The reply exactly as written: bytes decoded as UTF-8, CRLF kept (offsets point into it)."""
    if name == "-":
        buffer = getattr(sys.stdin, "buffer", None)  # a text-only stdin (embedding, tests) has none
        return _decode(buffer.read(), "stdin") if buffer is not None else sys.stdin.read()
    path = Path(name)
    if path.is_dir():
        raise ProtocolInputError(f"{name} is a folder, not a reply file", hint="give one file, or - to read stdin")
    if not path.is_file():
        raise ProtocolInputError(f"no such file: {name}", hint="give a reply file, or - to read stdin")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ProtocolInputError(f"cannot read {name}: {exc.strerror}") from exc
    return _decode(data, name)


def _decode(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProtocolInputError(f"{name} is not UTF-8 text ({exc.reason})",
                                 hint="save the reply as UTF-8") from exc  # fmt: skip


def _print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=2) + "\n")


def _parse(args: argparse.Namespace) -> int:
    text = _read(args.file)
    if args.protocol == "symops":
        from duckflow.protocols.symops import parse

        if args.debug:
            from duckflow.protocols.symops.robust import DebugProcessor

            result = DebugProcessor(sys.stderr).process(text, args.request)
        else:
            result = parse(text, request=args.request)
        _print_json(result.to_dict())
    elif args.protocol == "dml":
        from duckflow.protocols import dml

        _print_json(dml.parse(text).to_dict())
    else:
        from duckflow.protocols.jsonreply import read_json

        reply = read_json(text)
        _print_json({"ok": reply.ok, "value": reply.value, "repairs": reply.repairs, "errors": reply.errors})
    return 0


def _render(args: argparse.Namespace) -> int:
    from duckflow.protocols.symops import result_from_dict, serialize

    raw = _read(args.file)
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ProtocolInputError(f"{args.file} is not JSON: {exc.msg} at line {exc.lineno}",
                                 hint="give the output of `duckflow protocol parse`") from exc  # fmt: skip
    try:
        result = result_from_dict(data)
    except (ValueError, TypeError, KeyError) as exc:
        raise ProtocolInputError(f"{args.file} is not a Sym-Ops result: {exc}",
                                 hint="give the output of `duckflow protocol parse`") from exc  # fmt: skip
    sys.stdout.write(serialize(result))
    return 0


def _repair(args: argparse.Namespace) -> int:
    from duckflow.protocols.symops import repair_text

    text, _ = repair_text(_read(args.file))
    sys.stdout.write(text)
    return 0


def _prompt(args: argparse.Namespace) -> int:
    if args.protocol == "symops":
        from duckflow.protocols.symops.prompts import system_prompt

        sys.stdout.write(system_prompt())
    else:
        from duckflow.protocols.dml import system_prompt as dml_prompt

        text = dml_prompt()
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def run(args: argparse.Namespace) -> int:
    return {"parse": _parse, "render": _render, "repair": _repair, "prompt": _prompt}[args.action](args)
