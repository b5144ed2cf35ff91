"""Ctrl-C during `duckflow run` stops the current step cleanly, keeps the state and says how to resume."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def test_ctrl_c_stops_the_step_keeps_the_state_and_resume_continues(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    src = Path(__file__).resolve().parents[3] / "src"
    env = {**os.environ, "PYTHONPATH": str(src), "DUCKFLOW_HOME": str(tmp_path / "home"),
           "DUCKFLOW_CONFIG": os.devnull, "DUCKFLOW_DEMO_DELAY": "0.2"}
    cmd = [sys.executable, "-m", "duckflow", "run", "create hello.py", "-w", str(ws), "--model", "scripted:demo"]
    # SIGINT as a terminal gives it: a suite started in the background (`make test &`, a CI
    # runner's non-interactive shell) passes SIGINT ignored to its children, and Python keeps an
    # inherited SIG_IGN, so the Ctrl-C below would not reach the run at all
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert proc.stdout is not None
        seen = ""
        deadline = time.monotonic() + 60
        while "plan" not in seen and time.monotonic() < deadline:  # the first reply is being written
            seen += os.read(proc.stdout.fileno(), 64).decode("utf-8", "replace")
        time.sleep(0.3)  # (word by word, DUCKFLOW_DEMO_DELAY apart: it is still being written)
        proc.send_signal(signal.SIGINT)
        rest, _ = proc.communicate(timeout=20)
        out = seen + rest
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, out
    assert "Stopped (Ctrl-C); the work so far is kept" in out and "--resume" in out and "PLANNING" not in out
    assert "Traceback" not in out
    stop = next(ln for ln in out.splitlines() if "Stopped (Ctrl-C)" in ln)
    assert stop.startswith("Stopped (Ctrl-C)"), out  # on a fresh line, not after the half-written answer
    assert "… (cancelled)" in out  # and the half-written answer is marked as cancelled
    status = subprocess.run([sys.executable, "-m", "duckflow", "status", "-w", str(ws), "--json"], env=env,
                            capture_output=True, text=True, timeout=30)
    import json

    state = json.loads(status.stdout)
    assert state["status"] == "REQUIRES_USER_INPUT" and "cancelled by the person during PLANNING" in state["decision_log"]
    env["DUCKFLOW_DEMO_DELAY"] = "0"
    resumed = subprocess.run([*cmd[:4], "--resume", "-w", str(ws), "--model", "scripted:demo",
                              "--auto-approve-workspace"], env=env, capture_output=True, text=True, timeout=60)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert (ws / "hello.py").exists()
