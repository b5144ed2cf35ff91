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

from duckflow.channels.cli.common import print_json, read_input
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


def _parse(args: argparse.Namespace) -> int:
    text = read_input(args.file, what="reply file")
    if args.protocol == "symops":
        from duckflow.protocols.symops import parse

        if args.debug:
            from duckflow.protocols.symops.robust import DebugProcessor

            result = DebugProcessor(sys.stderr).process(text, args.request)
        else:
            result = parse(text, request=args.request)
        print_json(result.to_dict())
    elif args.protocol == "dml":
        from duckflow.protocols import dml
        from duckflow.protocols.dml.aliases import ALIAS_REF, AliasTable

        read = dml.parse(text)
        if ALIAS_REF.search(text):  # `{{F:x}}` must name an alias the text defines (F:x=path)
            defined = {m.name: m.args[0] for m in read.macros if m.command == "F" and m.valid and m.args}
            read = dml.parse(text, aliases=AliasTable.from_dict(defined))
        print_json(read.to_dict())
    else:
        from duckflow.protocols.jsonreply import read_json

        reply = read_json(text)
        print_json({"ok": reply.ok, "value": reply.value, "repairs": reply.repairs, "errors": reply.errors})
    return 0


def _render(args: argparse.Namespace) -> int:
    from duckflow.protocols.symops import result_from_dict, serialize

    raw = read_input(args.file, what="reply file")
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

    text, _ = repair_text(read_input(args.file, what="reply file"))
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
