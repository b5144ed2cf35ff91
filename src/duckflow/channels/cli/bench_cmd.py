"""`duckflow bench NAME [--json] ...`: runs the repository's benchmarks/NAME.py and prints its figures.

The benchmarks are not part of the installed package (they measure it, and need the
repository's corpus); in a checkout, `duckflow bench` finds them beside `src/`. Installed from
a wheel, it says where to get them.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from pathlib import Path
from types import ModuleType

from duckflow.channels.cli.common import note
from duckflow.errors import UserError

CHECKOUT = Path(__file__).resolve().parents[4]  # src/duckflow/channels/cli/ → the repository


def _package() -> ModuleType | None:
    """The repository's `benchmarks` package (never another package of that name), or None."""
    if not (CHECKOUT / "benchmarks" / "__init__.py").is_file():
        return None
    if str(CHECKOUT) not in sys.path:
        sys.path.insert(0, str(CHECKOUT))
    module = importlib.import_module("benchmarks")
    return module if Path(module.__file__ or "").resolve().parent == CHECKOUT / "benchmarks" else None


def _names() -> list[str]:
    pkg = _package()
    if pkg is None:
        return []
    return sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_"))


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help=f"benchmark to run: {', '.join(_names()) or 'none yet'}")
    parser.add_argument("rest", nargs=argparse.REMAINDER, help="options of that benchmark (e.g. --json)")


def run(args: argparse.Namespace) -> int:
    if _package() is None:
        raise UserError("the benchmarks are not installed: they live in the repository",
                        hint="git clone the Duckflow repository, `make test` once, then run `duckflow bench` there")
    names = _names()
    if args.name not in names:
        note(f"duckflow bench: unknown benchmark '{args.name}'. Known: {', '.join(names) or 'none'}.")
        return 2
    module = importlib.import_module(f"benchmarks.{args.name}")
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
