"""`duckflow sanitize [--json] [FILE|-]`: print the input with secrets and personal data masked."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from duckflow.errors import DuckflowError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", nargs="?", default="-", help="file to read, or - for stdin (default)")
    parser.add_argument(
        "--json",
        action="store_true",
        help="print {text, findings[{kind, start, end, placeholder}]}; offsets index the input text",
    )


def _read(name: str) -> str:
    if name == "-":
        data = sys.stdin.buffer.read()
    else:
        path = Path(name)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise DuckflowError(f"no such file: {name}", hint="give an existing file, or - for stdin") from None
        except IsADirectoryError:
            raise DuckflowError(f"{name} is a directory", hint="give a file, or - for stdin") from None
        except PermissionError:
            raise DuckflowError(f"cannot read {name}: permission denied", hint="check the file's permissions") from None
    # Decoding keeps every byte recoverable; offsets count characters of this decoded text.
    return data.decode("utf-8", errors="surrogateescape")


def run(args: argparse.Namespace) -> int:
    from duckflow.security.sanitizer import default_sanitizer

    text = _read(args.file)
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
