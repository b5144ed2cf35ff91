"""`duckflow bench startup [--json] [--rounds N]`: what a user waits for, against the floor.

Three figures, each against a baseline measured in the same run, interleaved (see `_ratio`):
- `duckflow run` on the scripted demo in a fresh folder, against a process that only imports
  asyncio, pydantic, rich.console and sqlite3 (the floor of a CLI built on them); bar ≤ 3×;
- the public import `from duckflow import Agent, tool`, against `import asyncio, pydantic`;
  bar ≤ 1.2×;
- peak RSS of that `duckflow run` (the child's own ru_maxrss); bar ≤ 60 MB.
Absolute figures and the load average are printed beside the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any

from benchmarks._ratio import interleave, machine, paired_ratio, summary, verdict

RUN_BAR = 3.0
IMPORT_BAR = 1.2
RSS_BAR_MB = 60.0
FLOOR_CLI = "import asyncio, pydantic, rich.console, sqlite3"
FLOOR_IMPORT = "import asyncio, pydantic"
PUBLIC_IMPORT = "from duckflow import Agent, tool"
# what the installed `duckflow` command runs (pip's console-script wrapper for
# [project.scripts] duckflow = "duckflow.channels.cli.main:console"); `python -m duckflow` would add runpy
CONSOLE_SCRIPT = "import sys\nfrom duckflow.channels.cli.main import console\nsys.exit(console())"
# until every install exports from the top package, the engine's own module is the public import
_IMPORT_CODE = ("try:\n    from duckflow import Agent, tool\n"
                "except ImportError:\n    from duckflow.core import Agent, tool\nAgent, tool")


def _child(argv: list[str], env: dict[str, str], cwd: str | None = None) -> tuple[float, float]:
    """(wall seconds, peak RSS in MB) of one child process; raises on a non-zero exit."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:4])}… exited {proc.returncode}: {err.strip()[-300:]}")
    return wall, usage.ru_maxrss / 1024.0


def measure(rounds: int) -> dict[str, Any]:
    py = sys.executable
    home = tempfile.mkdtemp(prefix="duckflow-bench-home-")
    # DUCKFLOW_DEMO_DELAY=0: the demo model's word-by-word pace is a show for a terminal, not
    # Duckflow's cost (it is already 0 when output is not a terminal; set here to be explicit)
    # PYTHONDONTWRITEBYTECODE is dropped (any non-empty value, "0" too, stops Python writing .pyc
    # files): an installed package has its bytecode, so the warm-up round writes what is missing
    # and every measured round starts warm, as a user's second run does
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update({"DUCKFLOW_HOME": home, "DUCKFLOW_CONFIG": os.devnull, "DUCKFLOW_DEMO_DELAY": "0"})
    rss: list[float] = []

    def run_demo() -> float:
        work = tempfile.mkdtemp(prefix="duckflow-bench-run-")
        try:
            wall, peak = _child([py, "-c", CONSOLE_SCRIPT, "run", "Create hello.py", "--model", "scripted:demo",
                                 "-w", work, "--auto-approve-workspace"], env)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        rss.append(peak)
        return wall

    cases = {
        "run_demo": run_demo,
        "floor_cli": lambda: _child([py, "-c", FLOOR_CLI], env)[0],
        "public_import": lambda: _child([py, "-c", _IMPORT_CODE], env)[0],
        "floor_import": lambda: _child([py, "-c", FLOOR_IMPORT], env)[0],
    }
    try:
        times = interleave(cases, rounds, warmup=1)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    run_ratio = paired_ratio(times["run_demo"], times["floor_cli"])
    import_ratio = paired_ratio(times["public_import"], times["floor_import"])
    peak = max(rss[1:] or rss)  # the warm-up run learns the token piece cache
    bars = {"run_vs_floor": run_ratio["median"] <= RUN_BAR,
            "import_vs_floor": import_ratio["median"] <= IMPORT_BAR,
            "peak_rss": peak <= RSS_BAR_MB}
    return {
        "bench": "startup", "rounds": rounds, "machine": machine(),
        "run_demo": {"ratio_to_floor": run_ratio, "bar": RUN_BAR, "seconds": summary(times["run_demo"]),
                     "floor": FLOOR_CLI, "floor_seconds": summary(times["floor_cli"])},
        "public_import": {"ratio_to_floor": import_ratio, "bar": IMPORT_BAR, "statement": PUBLIC_IMPORT,
                          "seconds": summary(times["public_import"]), "floor": FLOOR_IMPORT,
                          "floor_seconds": summary(times["floor_import"])},
        "peak_rss_mb": {"max": round(peak, 1), "runs": [round(x, 1) for x in rss], "bar": RSS_BAR_MB},
        "bars": bars, "verdict": verdict(bars),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="duckflow bench startup")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--rounds", type=int, default=9)  # a median of 9 paired ratios holds under load
    args = parser.parse_args(argv)
    r = measure(max(3, args.rounds))
    if args.json:
        print(json.dumps(r))
    else:
        m = r["machine"]
        print(f"load {m['load_avg']} on {m['cpus']} cpus, {r['rounds']} interleaved rounds")
        rd, pi = r["run_demo"], r["public_import"]

        def spread(d: dict[str, float], unit: str = " s", digits: int = 3) -> str:
            return f"min {d['min']:.{digits}f} / median {d['median']:.{digits}f} / max {d['max']:.{digits}f}{unit}"

        print(f"duckflow run (scripted demo): {rd['ratio_to_floor']['median']}× the floor (ratio "
              f"{spread(rd['ratio_to_floor'], '×', 2)}); bar ≤ {RUN_BAR}×")
        print(f"  duckflow run   {spread(rd['seconds'])}")
        print(f"  floor `{FLOOR_CLI}`   {spread(rd['floor_seconds'])}")
        print(f"{PUBLIC_IMPORT}: {pi['ratio_to_floor']['median']}× the floor (ratio "
              f"{spread(pi['ratio_to_floor'], '×', 2)}); bar ≤ {IMPORT_BAR}×")
        print(f"  public import   {spread(pi['seconds'])}")
        print(f"  floor `{FLOOR_IMPORT}`   {spread(pi['floor_seconds'])}")
        print(f"peak RSS of duckflow run: {r['peak_rss_mb']['max']} MB; bar ≤ {RSS_BAR_MB} MB")
        print(r["verdict"])
    return 0 if r["verdict"] == "PASS" else 1
