"""`duckflow bench repeat N NAME... [--under-tests] [--out FILE]`: run benches N times, count passes.

Issue 12's bar for every bench: it passes 5 runs out of 5 on a machine under load. This runs
each named bench N times in a row (`duckflow bench NAME --json`, a fresh process each time),
records its exit code (0 = every bar held), the load average before and after, and the ratio
bars it reported (`ratios` in its JSON), and prints one Markdown table per bench: command,
load average range, pass count, and each ratio's min / median / max over the runs.

`--under-tests` puts the machine under the load the issue names: the test suite runs in a loop
in the background (`pytest -q -m 'not local_model' tests`, from this checkout) for as long as
the benches run, and is stopped at the end. `--out FILE` keeps every run's JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

CHECKOUT = Path(__file__).resolve().parents[1]
TEST_LOOP = ("while true; do {py} -m pytest -q -x -p no:cacheprovider -m 'not local_model' tests "
             ">/dev/null 2>&1; done")


def load_avg() -> float:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return float("nan")


def ratios_of(name: str, report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The ratio bars of one report, by bar name: {value, limit, pass, min?, max?}."""
    if isinstance(report.get("ratios"), list):
        return {r["bar"]: r for r in report["ratios"]}
    out: dict[str, dict[str, Any]] = {}
    if name == "startup":  # its module reports the ratios in its own shape
        for key, bar in (("run_demo", "run / floor CLI"), ("public_import", "import / floor import")):
            part = report.get(key) or {}
            ratio = part.get("ratio_to_floor") or {}
            if "median" in ratio:
                out[bar] = {"bar": bar, "value": ratio["median"], "limit": part.get("bar"),
                            "min": ratio.get("min"), "max": ratio.get("max"),
                            "pass": part.get("bar") is None or ratio["median"] <= part["bar"]}
    return out


def run_once(name: str, extra: list[str], env: dict[str, str]) -> dict[str, Any]:
    """One `duckflow bench NAME --json` in a fresh process: exit code, load, seconds, ratios."""
    cmd = [sys.executable, "-m", "duckflow", "bench", name, "--json", *extra]
    before, started = load_avg(), time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=str(CHECKOUT))
    seconds, after = time.perf_counter() - started, load_avg()
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        report = {"unreadable": proc.stdout[-500:], "stderr": proc.stderr[-500:]}
    return {"bench": name, "exit": proc.returncode, "passed": proc.returncode == 0, "load": [before, after],
            "seconds": round(seconds, 1), "ratios": ratios_of(name, report), "report": report}


def table(name: str, extra: list[str], runs: list[dict[str, Any]]) -> str:
    """The Markdown table of one bench's runs."""
    loads = [x for r in runs for x in r["load"]]
    passed = sum(r["passed"] for r in runs)
    cmd = " ".join(["duckflow bench", name, "--json", *extra])
    lines = [f"`{cmd}` × {len(runs)}: **{passed}/{len(runs)} passed**, load average "
             f"{min(loads):.1f}–{max(loads):.1f}, {min(r['seconds'] for r in runs):.0f}–"
             f"{max(r['seconds'] for r in runs):.0f} s a run", "",
             "| ratio bar | limit | min | median | max | runs within the limit |", "|---|---|---|---|---|---|"]
    names: list[str] = []
    for r in runs:
        names += [n for n in r["ratios"] if n not in names]
    for bar in names:
        cells = [r["ratios"][bar] for r in runs if bar in r["ratios"]]
        values = [c["value"] for c in cells if isinstance(c.get("value"), (int, float))]
        if not values:
            lines.append(f"| {bar} | {cells[0].get('limit')} | not measured | | | |")
            continue
        ok = sum(bool(c.get("pass")) for c in cells)
        lines.append(f"| {bar} | {cells[0].get('limit')} | {min(values):g} | {statistics.median(values):g} | "
                     f"{max(values):g} | {ok}/{len(cells)} |")
    failed = [f"run {i}: exit {r['exit']}" for i, r in enumerate(runs, 1) if not r["passed"]]
    if failed:
        lines += ["", "Failed: " + "; ".join(failed)]
    return "\n".join(lines)


def summary_row(name: str, extra: list[str], runs: list[dict[str, Any]]) -> str:
    """One row of the summary table (docs/benchmarks.md, "5 runs under load")."""
    loads = [x for r in runs for x in r["load"]]
    names: list[str] = []
    for r in runs:
        names += [n for n in r["ratios"] if n not in names]
    cells = []
    for bar in names:
        values = [r["ratios"][bar]["value"] for r in runs
                  if bar in r["ratios"] and isinstance(r["ratios"][bar].get("value"), (int, float))]
        limit = next(r["ratios"][bar].get("limit") for r in runs if bar in r["ratios"])
        if values:
            cells.append(f"{bar} (≤ {limit:g}): {min(values):g} / {statistics.median(values):g} / {max(values):g}"
                         if isinstance(limit, (int, float)) else f"{bar}: {statistics.median(values):g}")
    label = " ".join([name, *extra])
    return (f"| {label} | **{sum(r['passed'] for r in runs)}/{len(runs)}** | {min(loads):.1f}–{max(loads):.1f} | "
            + "; ".join(cells) + " |")


class TestLoop:
    """The test suite in a loop in the background (its own process group, stopped at the end)."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(["sh", "-c", TEST_LOOP.format(py=sys.executable)], cwd=str(CHECKOUT), env=env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

    def stop(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="duckflow bench repeat", description=__doc__.splitlines()[0])
    parser.add_argument("times", type=int, help="runs per bench (the issue's bar: 5 of 5)")
    parser.add_argument("names", nargs="+", help="benches to run, e.g. engine security")
    parser.add_argument("--under-tests", action="store_true",
                        help="run the test suite in a loop in the background meanwhile (the issue's load)")
    parser.add_argument("--args", default="", help="options passed to every bench, e.g. --args=--require-peers")
    parser.add_argument("--out", type=Path, help="write every run's JSON here")
    args = parser.parse_args(argv)
    known = _known()
    unknown = [n for n in args.names if n not in known]
    if unknown or args.times < 1:
        print(f"duckflow bench repeat: unknown bench {unknown[0]!r}; known: {', '.join(sorted(known))}"
              if unknown else "duckflow bench repeat: N must be 1 or more", file=sys.stderr)
        return 2
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(CHECKOUT / "src"), os.environ.get("PYTHONPATH", "")])}
    extra = args.args.split()
    loop = TestLoop(env) if args.under_tests else None
    results: dict[str, list[dict[str, Any]]] = {}
    try:
        if loop:
            time.sleep(5)  # let the suite get going before the first run
        for name in args.names:
            for i in range(args.times):
                r = run_once(name, extra, env)
                results.setdefault(name, []).append(r)
                print(f"{name} run {i + 1}/{args.times}: {'PASS' if r['passed'] else 'FAIL'} "
                      f"(load {r['load'][0]}→{r['load'][1]}, {r['seconds']} s) "
                      + ", ".join(f"{k} {v.get('value')}" for k, v in r["ratios"].items()), file=sys.stderr)
    finally:
        if loop:
            loop.stop()
    if args.out:
        args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    under = "while the test suite ran in a loop" if args.under_tests else "no extra load started"
    print(f"{args.times} runs per bench, {under}, {os.cpu_count()} cores\n")
    for name, runs in results.items():
        print(f"### {name}\n\n{table(name, extra, runs)}\n")
    print("| bench | passed | load average | ratio bar (limit): min / median / max over the runs |\n|---|---|---|---|")
    for name, runs in results.items():
        print(summary_row(name, extra, runs))
    return 0 if all(r["passed"] for runs in results.values() for r in runs) else 1


def _known() -> set[str]:
    import pkgutil

    import benchmarks as pkg

    return {m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_") and m.name != "repeat"}


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
