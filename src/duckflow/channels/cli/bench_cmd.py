"""`duckflow bench NAME [--json] ...`: runs duckflow.bench.NAME and prints its figures."""

from __future__ import annotations

import argparse
import importlib
import pkgutil

import duckflow.bench as bench_pkg
from duckflow.channels.cli.common import note


def _names() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(bench_pkg.__path__) if not m.name.startswith("_"))


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help=f"benchmark to run: {', '.join(_names()) or 'none yet'}")
    parser.add_argument("rest", nargs=argparse.REMAINDER, help="options of that benchmark (e.g. --json)")


def run(args: argparse.Namespace) -> int:
    names = _names()
    if args.name not in names:
        note(f"duckflow bench: unknown benchmark '{args.name}'. Known: {', '.join(names) or 'none'}.")
        return 2
    module = importlib.import_module(f"duckflow.bench.{args.name}")
    return int(module.main(list(args.rest)))
