"""`duckflow sanitize [--json] [FILE|-]`: print the input with secrets and personal data masked."""

from __future__ import annotations

import argparse
import json
import sys

from duckflow.channels.cli.common import read_input


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", nargs="?", default="-", help="file to read, or - for stdin (default)")
    parser.add_argument(
        "--json",
        action="store_true",
        help="print {text, findings[{kind, start, end, placeholder}]}; offsets index the input text",
    )


def run(args: argparse.Namespace) -> int:
    from duckflow.security.sanitizer import default_sanitizer

    text = read_input(args.file, decode="surrogateescape")  # every byte stays recoverable
    masked = default_sanitizer().mask(text)
    if args.json:
        # Undecodable input bytes appear as \udcXX escapes so the JSON stays valid UTF-8.
        ascii_only = any("\udc80" <= ch <= "\udcff" for ch in text)
        body = json.dumps(masked.to_dict(), ensure_ascii=ascii_only) + "\n"
        sys.stdout.buffer.write(body.encode("utf-8"))
    else:
        sys.stdout.buffer.write(masked.text.encode("utf-8", errors="surrogateescape"))
    sys.stdout.buffer.flush()
    return 0
