"""`duckflow bench effects [--files N] [--rounds N] [--sandbox auto|none] [--json]`: what the effects check costs a command.

Every auto-approved command runs under the effects check (workspace/effects.py): a stat
snapshot before (content stored in the undo store only for files that changed since the last
check), bubblewrap's read-only binds of the files outside the approval, and a comparison
after. The bar is a ratio measured in this run: the wall time of `true` run the way an
auto-approved command runs (snapshot + binds + run + compare), over `true` run the way a
person-approved command runs (no check), on a synthetic workspace of N files (~25 KB on
average), in the same sandbox mode. The first snapshot of a workspace reads and stores every
file once; it is reported beside the ratio (an absolute figure, no bar).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

RATIO_BAR = 3.0  # (command + check) / command, warm, 2,000 files


def _workspace(root: Path, files: int) -> None:
    for i in range(files):
        d = root / f"pkg{i % 40}" / f"sub{i % 7}"
        d.mkdir(parents=True, exist_ok=True)
        size = 1_000_000 if i % 500 == 0 else 1024 + (i * 37) % 8192
        (d / f"mod{i}.py").write_bytes(os.urandom(size // 2).hex().encode()[:size])


def _timed_run(root: Path, sandbox: str, readonly: tuple[str, ...] = ()) -> float:
    from duckflow.workspace.shell import run_command

    t0 = time.perf_counter()
    asyncio.run(run_command(root, "true", timeout=30, limit=4096, sandbox=sandbox, readonly=readonly))
    return time.perf_counter() - t0


def measure(files: int, rounds: int, sandbox: str = "auto") -> dict[str, Any]:
    from benchmarks._ratio import interleave, paired_ratio, summary
    from duckflow.workspace.effects import Watch
    from duckflow.workspace.sandbox import bwrap_usable

    sandbox = "bwrap" if sandbox != "none" and bwrap_usable() else "none"
    tmp = Path(tempfile.mkdtemp(prefix="duckflow-bench-effects-"))
    old_home = os.environ.get("DUCKFLOW_HOME")
    os.environ["DUCKFLOW_HOME"] = str(tmp / "home")
    try:
        root = tmp / "ws"
        root.mkdir()
        _workspace(root, files)
        t0 = time.perf_counter()
        Watch.start(root).finish()
        first = time.perf_counter() - t0

        def checked() -> float:
            t = time.perf_counter()
            watch = Watch.start(root)
            ro = tuple(watch.readonly()) if sandbox == "bwrap" else ()
            _timed_run(root, sandbox, ro)
            fx = watch.finish()
            assert not fx.changed
            return time.perf_counter() - t

        times = interleave({"checked": checked, "plain": lambda: _timed_run(root, sandbox)}, rounds)
        ratio = paired_ratio(times["checked"], times["plain"])
        size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
        return {"files": files, "megabytes": round(size / 1e6, 1), "sandbox": sandbox,
                "first_snapshot_ms": round(first * 1000, 1), "ratio": ratio,
                "checked_ms": summary(times["checked"], 1000, 1),
                "unchecked_ms": summary(times["plain"], 1000, 1)}
    finally:
        if old_home is None:
            os.environ.pop("DUCKFLOW_HOME", None)
        else:
            os.environ["DUCKFLOW_HOME"] = old_home
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str]) -> int:
    from benchmarks._ratio import machine, ratio_bar

    parser = argparse.ArgumentParser(prog="duckflow bench effects")
    parser.add_argument("--files", type=int, default=2000, help="files in the synthetic workspace")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (median ratio kept)")
    parser.add_argument("--sandbox", choices=["auto", "none"], default="auto",
                        help="none: plain mode (no read-only binds; the comparison alone)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    got = measure(max(1, args.files), max(1, args.rounds), args.sandbox)
    bar = ratio_bar("auto-approved `true` with the effects check / without it", got["ratio"], RATIO_BAR)
    report = {"benchmark": "effects", "machine": machine(), "ratios": [bar], **got}
    if args.json:
        print(json.dumps(report))
    else:
        r = got["ratio"]
        print(f"effects check, {got['files']} files ({got['megabytes']} MB), sandbox {got['sandbox']}: "
              f"ratio min/median/max {r['min']}/{r['median']}/{r['max']} (bar <= {RATIO_BAR}); "
              f"checked {got['checked_ms']['median']} ms, unchecked {got['unchecked_ms']['median']} ms; "
              f"first snapshot {got['first_snapshot_ms']} ms")
    return 0 if bar.get("pass") else 1
