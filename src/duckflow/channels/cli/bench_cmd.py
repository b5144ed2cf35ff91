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
    return int(module.main(_own_options(list(args.rest))))


def _own_options(rest: list[str]) -> list[str]:
    """The benchmark's own options: the ones every command shares (`-w/--workspace DIR`, `--debug`;
    a benchmark uses no workspace, and --debug is read by the top-level handler) are dropped, so
    `duckflow bench protocols --json -w DIR` works as `duckflow bench -w DIR protocols --json` does."""
    out: list[str] = []
    skip = False
    for arg in rest:
        if skip:
            skip = False
        elif arg in ("-w", "--workspace"):
            skip = True
        elif arg == "--debug" or arg.startswith("--workspace=") or (arg.startswith("-w") and len(arg) > 2):
            continue
        else:
            out.append(arg)
    return out
