"""`duckflow bench everyday [--set new|earlier|all] [--tasks a,b] [--model M] [--timeout S] [--json]`: held-out everyday tasks, run as a person runs them.

Each task of `_everyday_tasks` (twelve small jobs nobody tuned the loop on; `--set earlier`: an
earlier set of six) gets a fresh
workspace with its files and one `duckflow run --auto-approve-workspace --json "TASK"` in a
child process (the front door, model loaded as a person's run loads it, its own DUCKFLOW_HOME),
bounded by `--timeout`. Then the task's hidden check runs the result. Per task: passed, the
ending kind the run reported (done / not_done / not_verified, or how it stopped), seconds, the
load average; in all: passed/N, false Dones (a "done" ending on a result that fails its check)
and each ending kind against the real result.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._compliance_tasks import Task
from benchmarks._everyday_tasks import SETS
from benchmarks.compliance import check, setup
from benchmarks.exercism import ending_kind

SRC = Path(__file__).resolve().parents[1] / "src"
TIMEOUT_S = 600.0


def run_task(task: Task, root: Path, model: str, timeout_s: float, keep: Path | None = None) -> dict[str, Any]:
    """One task: its workspace, one `duckflow run`, its check. The row of the report (`keep`: the
    run's output and the workspace's files as it ended are copied to keep/TASK/)."""
    ws, home = root / "ws", root / "home"
    setup(task, ws)
    home.mkdir()
    env = {**os.environ, "DUCKFLOW_HOME": str(home), "PYTHONPATH": os.pathsep.join(
        [str(SRC), *filter(None, [os.environ.get("PYTHONPATH")])])}
    argv = [sys.executable, "-m", "duckflow", "run", "--auto-approve-workspace", "--json", "-w", str(ws),
            "--model", model, task.text]
    started = time.perf_counter()
    note, data, said = "", {}, ""
    try:
        done = subprocess.run(argv, cwd=ws, env=env, capture_output=True, text=True, timeout=timeout_s,
                              stdin=subprocess.DEVNULL)
        said = done.stdout + "\n--- stderr\n" + done.stderr
        last = (done.stdout.strip().splitlines() or [""])[-1]
        try:
            data = json.loads(last)
        except ValueError:
            note = f"exit {done.returncode}, no JSON: {(done.stderr.strip().splitlines() or [''])[-1][:200]}"
        ending = ending_kind(data) if data else "error"
    except subprocess.TimeoutExpired as exc:
        ending, note = "timeout", f"no ending within {timeout_s:.0f} s"
        said = exc.stdout.decode("utf-8", "replace") if isinstance(exc.stdout, bytes) else str(exc.stdout or "")
    seconds = time.perf_counter() - started
    passed = check(task, ws)
    if keep is not None:
        import shutil

        shutil.copytree(ws, keep / task.name, dirs_exist_ok=True)
        (keep / task.name / "_run.txt").write_text(said, encoding="utf-8")
    result = data.get("result") or {}
    return {"task": task.name, "passed": passed, "ending": ending, "seconds": round(seconds, 1),
            "said": str(result.get("said") or data.get("message") or note)[:300], "note": note,
            "load_avg": round(os.getloadavg()[0], 2)}


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    endings: dict[str, dict[str, int]] = {}
    for r in rows:
        cell = endings.setdefault(r["ending"], {"passed": 0, "failed": 0})
        cell["passed" if r["passed"] else "failed"] += 1
    secs = sorted(r["seconds"] for r in rows)
    return {"tasks": len(rows), "passed": sum(r["passed"] for r in rows),
            "false_done": sum(r["ending"] == "done" and not r["passed"] for r in rows),
            "endings": endings, "median_s": secs[len(secs) // 2] if secs else 0.0,
            "max_s": secs[-1] if secs else 0.0}


def report(result: dict[str, Any]) -> str:
    s = result["summary"]
    lines = [f"{result['model']} · {s['tasks']} tasks · passed {s['passed']}/{s['tasks']} · "
             f"false Dones {s['false_done']} · median {s['median_s']} s, longest {s['max_s']} s",
             "", "| task | passed | ending | seconds | load | said |", "|---|---|---|---|---|---|"]
    for r in result["rows"]:
        lines.append(f"| {r['task']} | {'yes' if r['passed'] else 'no'} | {r['ending']} | {r['seconds']} | "
                     f"{r['load_avg']} | {r['said'][:90].replace('|', '/')} |")
    lines += ["", "| ending | passed | failed |", "|---|---|---|"]
    lines += [f"| {k} | {v['passed']} | {v['failed']} |" for k, v in sorted(s["endings"].items())]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="duckflow bench everyday")
    parser.add_argument("--model", default="local:default")
    parser.add_argument("--set", default="new", choices=sorted(SETS),
                        help="new: the twelve (default); earlier: an earlier set of six; all: both")
    parser.add_argument("--tasks", default="", help="comma list of task names (default: all of the set)")
    parser.add_argument("--timeout", type=float, default=TIMEOUT_S, help="seconds per task (default 600)")
    parser.add_argument("--out", default="", help="write the results here after every task (JSON)")
    parser.add_argument("--keep", default="", help="copy each run's output and files to DIR/TASK/")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    wanted = [t for t in args.tasks.split(",") if t]
    unknown = [t for t in wanted if t not in {x.name for x in SETS[args.set]}]
    if unknown:
        print(f"duckflow bench everyday: no task {', '.join(unknown)} in --set {args.set}", file=sys.stderr)
        return 2
    tasks = [t for t in SETS[args.set] if not wanted or t.name in wanted]
    rows: list[dict[str, Any]] = []
    result: dict[str, Any] = {}
    for i, task in enumerate(tasks, 1):
        with tempfile.TemporaryDirectory(prefix="duckflow-everyday-") as d:
            rows.append(run_task(task, Path(d), args.model, args.timeout, Path(args.keep) if args.keep else None))
        r = rows[-1]
        print(f"{i}/{len(tasks)} {task.name}: {'pass' if r['passed'] else 'FAIL'} · {r['ending']} · "
              f"{r['seconds']} s · {r['said'][:120]}", file=sys.stderr, flush=True)
        result = {"model": args.model, "rows": rows, "summary": summarize(rows),
                  "command": "duckflow bench everyday " + " ".join(argv)}
        if args.out:
            Path(args.out).write_text(json.dumps(result, indent=1))
    print(json.dumps(result, ensure_ascii=False) if args.json else report(result))
    return 0
