"""`duckflow bench server` runs end to end at a small scale: real server process, real HTTP, figures out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[3] / "src")


def test_bench_server_reports_every_figure_with_no_errors_and_no_gaps() -> None:
    env = {**os.environ, "PYTHONPATH": SRC}
    proc = subprocess.run([sys.executable, "-m", "duckflow", "bench", "server", "--levels", "2,6", "--rounds", "2",
                           "--pace", "0.3", "--messages", "2", "--json"],
                          capture_output=True, text=True, timeout=240, env=env)
    data = json.loads(proc.stdout)
    assert [lv["sessions"] for lv in data["levels"]] == [2, 6]
    for lv in data["levels"]:
        assert lv["errors"] == 0 and lv["seq_gaps"] == 0, lv
        assert lv["chunks"] >= lv["sessions"] * 5 and lv["ttfc_p99_ms"] > 0 and lv["ttft_p50_ms"] >= lv["ttfc_p50_ms"]
        assert lv["client_cpu_ms_per_message"] > 0  # what the client itself took, shown beside the server's
    # paced: each session sent 2 messages in each of 2 rounds; offered ~ sessions / pace
    assert [lv["messages"] for lv in data["levels"]] == [8, 24]
    # interleaved: per round each level sends in `messages` stretches of one message per session,
    # the levels taking turns (then one burst per level); the bench waits for an idle server before each
    assert len(data["idle_wait_s"]) == 2 * (2 * 2 + 2)
    assert [len(r) for r in data["rounds"]] == [2, 2] and all(r[0]["messages"] == 4 for r in data["rounds"])
    assert [lv["offered_per_s"] for lv in data["levels"]] == [6.7, 20.0] and data["pace_s"] == 0.3
    # the burst is shown beside, on the same sessions (seq carried across: no false gaps)
    assert [lv["sessions"] for lv in data["burst_levels"]] == [2, 6] and data["burst_ttfc_p99_ratio"] > 0
    assert all(lv["errors"] == 0 and lv["seq_gaps"] == 0 and lv["messages"] == 2 * lv["sessions"]
               for lv in data["burst_levels"])
    assert data["memory_per_idle_session_kb"] > 0 and data["ratio_bar"] == 10.0
    assert len(data["rounds"]) == 2 and len(data["round_ratios"]) == 2 and len(data["burst_rounds"]) == 2
    bar = data["ratios"][0]
    assert bar["limit"] == 10.0 and bar["min"] <= bar["value"] <= bar["max"] and bar["value"] == data["ttfc_p99_ratio"]
    assert data["machine"]["cpus"] >= 1 and data["passed"] == (bar["pass"] and all(
        lv["errors"] == 0 and lv["seq_gaps"] == 0 for lv in data["levels"]))
    assert proc.returncode == (0 if data["passed"] else 1)
    bad = subprocess.run([sys.executable, "-m", "duckflow", "bench", "server", "--levels", "x"],
                         capture_output=True, text=True, timeout=60, env=env)
    assert bad.returncode == 2 and "--levels" in bad.stderr and "Traceback" not in bad.stderr
    bad = subprocess.run([sys.executable, "-m", "duckflow", "bench", "server", "--pace", "0"],
                         capture_output=True, text=True, timeout=60, env=env)
    assert bad.returncode == 2 and "--pace" in bad.stderr and "Traceback" not in bad.stderr
