"""Ctrl-C during `duckflow run` cancels the current step cleanly (exit 130), keeps the state, says truly what it
changed and how to resume; with --json the result's kind is "cancelled"."""

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
    assert "Cancelled — nothing was changed." in out and "--resume" in out and "PLANNING" not in out
    assert "Traceback" not in out and "Paused" not in out
    stop = next(ln for ln in out.splitlines() if "Cancelled —" in ln)
    assert stop.startswith("Cancelled —"), out  # on a fresh line, not after the half-written answer
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


def _interrupted(tmp_path: Path, *extra: str, ws: Path, after: str) -> tuple[subprocess.CompletedProcess[str], str]:
    src = Path(__file__).resolve().parents[3] / "src"
    env = {**os.environ, "PYTHONPATH": str(src), "DUCKFLOW_HOME": str(tmp_path / "home"),
           "DUCKFLOW_CONFIG": os.devnull, "DUCKFLOW_DEMO_DELAY": "0.2"}
    cmd = [sys.executable, "-m", "duckflow", "run", "create hello.py", "-w", str(ws), "--model", "scripted:demo",
           *extra]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 90
        while not after_seen(ws, after) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # (the review is being written, word by word)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    return subprocess.CompletedProcess(cmd, proc.returncode, out, ""), out


def after_seen(ws: Path, name: str) -> bool:
    return (ws / name).exists()


def test_ctrl_c_after_a_write_says_the_file_changed_and_json_says_cancelled(tmp_path: Path) -> None:
    import json

    ws = tmp_path / "ws"
    ws.mkdir()
    done, out = _interrupted(tmp_path, "--auto-approve-workspace", "--json", ws=ws, after="hello.py")
    assert done.returncode == 130, out
    said = json.loads(out[out.index("{"):])
    assert said["ending"] == "cancelled" and said["ok"] is False and said["result"]["kind"] == "cancelled"
    assert said["result"]["files_changed"] == ["hello.py"] and said["result"]["undos"] == 1
    assert said["message"] == "Cancelled — 1 file changed so far (hello.py); `duckflow undo` to take it back."
    assert (ws / "hello.py").exists() and "Traceback" not in out
