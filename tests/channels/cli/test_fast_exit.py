"""The `duckflow` command skips the interpreter's teardown, and loses nothing by it.

Each test runs the real entry point (`python -m duckflow`, as the console script does) in a
child process, once with the fast exit and once with `DUCKFLOW_NO_FAST_EXIT=1`, and compares
what a person keeps: the exit code, the file written, the trace, the event log, the session.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

# an atexit handler registered before the command's own: Python's shutdown runs it after the
# command's handler; the fast exit ends the process in the command's handler, so it never runs
# (a __del__ probe would not do: objects frozen by gc.freeze() are not always freed at exit)
PROBE = (
    "import atexit, os, sys\n"
    "atexit.register(os.write, 2, b'TEARDOWN\\n')\n"
    "from duckflow.channels.cli.main import console\n"
    "sys.exit(console())\n"
)


def _env(home: Path, fast: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DUCKFLOW_NO_FAST_EXIT"}
    env.update(DUCKFLOW_HOME=str(home), DUCKFLOW_CONFIG=os.devnull, DUCKFLOW_DEMO_DELAY="0")
    if not fast:
        env["DUCKFLOW_NO_FAST_EXIT"] = "1"
    return env


def _run(args: list[str], home: Path, fast: bool) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", PROBE, *args], env=_env(home, fast), capture_output=True,
                          text=True, timeout=120)


def _kept(home: Path, work: Path) -> dict[str, object]:
    traces = sorted((home / "traces").glob("*.jsonl"))
    trace = [json.loads(line)["event"] for p in traces for line in p.read_text(encoding="utf-8").splitlines()]
    events_file = home / "events" / "events.jsonl"
    events = [json.loads(line)["type"] for line in events_file.read_text(encoding="utf-8").splitlines()] \
        if events_file.exists() else []
    with sqlite3.connect(home / "sessions.db") as db:
        steps = [row[0] for row in db.execute("SELECT step FROM companion_sessions")]
    return {"hello": (work / "hello.py").read_text(encoding="utf-8"), "trace": trace, "events": events,
            "steps": steps}


@pytest.mark.parametrize("fast", [True, False])
def test_a_run_keeps_everything_with_and_without_the_fast_exit(tmp_path: Path, fast: bool) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    proc = _run(["run", "Create hello.py", "--model", "scripted:demo", "-w", str(work),
                 "--auto-approve-workspace"], home, fast)
    assert proc.returncode == 0, proc.stderr
    assert ("TEARDOWN" in proc.stderr) is not fast  # the teardown ran only when asked for
    # the fast exit leaves the session database's WAL for the next open (no checkpoint, no sync)
    assert (home / "sessions.db-wal").exists() is fast
    kept = _kept(home, work)
    assert "Hello from Duckflow!" in str(kept["hello"])
    assert kept["steps"] == ["DONE"]
    assert kept["trace"].count("llm_call") >= 4 and "tool_end" in kept["trace"]  # type: ignore[union-attr]
    assert "router.decision" in kept["events"]  # type: ignore[operator]


def test_the_fast_exit_keeps_the_same_trace_events_log_and_state(tmp_path: Path) -> None:
    seen = []
    for fast in (True, False):
        home, work = tmp_path / f"home-{fast}", tmp_path / f"work-{fast}"
        work.mkdir()
        proc = _run(["run", "Create hello.py", "--model", "scripted:demo", "-w", str(work),
                     "--auto-approve-workspace"], home, fast)
        assert proc.returncode == 0, proc.stderr
        seen.append(_kept(home, work))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("fast", [True, False])
def test_exit_codes_and_messages_survive_the_fast_exit(tmp_path: Path, fast: bool) -> None:
    work = tmp_path / "work"
    work.mkdir()
    # no --auto-approve-workspace: the write waits for a person, exit code 4 and the next step
    proc = _run(["run", "Create hello.py", "--model", "scripted:demo", "-w", str(work)], tmp_path / "home", fast)
    assert proc.returncode == 4 and "duckflow approvals grant" in proc.stderr, proc.stderr
    assert not (work / "hello.py").exists()
    error = _run(["run"], tmp_path / "home", fast)  # no task: a one-line error and code 1
    assert error.returncode == 1 and "no task given" in error.stderr and "Traceback" not in error.stderr
    version = _run(["--version"], tmp_path / "home", fast)
    assert version.returncode == 0 and version.stdout.strip()


def test_a_program_calling_main_keeps_pythons_own_shutdown(tmp_path: Path) -> None:
    code = PROBE.replace("from duckflow.channels.cli.main import console\nsys.exit(console())",
                         "from duckflow.channels.cli.main import main\nmain(['--version'])\nsys.exit(3)")
    proc = subprocess.run([sys.executable, "-c", code], env=_env(tmp_path, True), capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 3 and "TEARDOWN" in proc.stderr  # its own exit code, its own teardown
