"""`make run`: the main job. Until the companion lands, it shows the protocol layer at work.

It parses each reply in examples/ with the Sym-Ops / DML / JSON readers and prints what was
recovered, what was repaired, and what would and would not be executed.
"""

from __future__ import annotations

import sys
from pathlib import Path


def main() -> int:
    from duckflow.channels.cli.main import main as cli

    examples = Path(__file__).resolve().parents[2] / "examples"
    files = sorted(examples.glob("*.*")) if examples.is_dir() else []
    if not files:
        print("no examples found in examples/")
        return 1
    rc = 0
    for path in files:
        protocol = {".symops": "symops", ".dml": "dml", ".json": "json"}.get(path.suffix)
        if protocol is None:
            continue
        print(f"\n=== {path.name} ({protocol}) ===")
        rc |= cli(["protocol", "parse", "--protocol", protocol, str(path)])
    return rc


if __name__ == "__main__":
    sys.exit(main())
