"""`duckflow bench server --workers N --redis --database`: one process and N side by side, real stores."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from tests.channels.scale.conftest import SRC


def test_bench_server_on_the_shared_stores_runs_one_process_and_n_side_by_side(
        redis_server: Any, database: str) -> None:
    env = {**os.environ, "PYTHONPATH": SRC}
    done = subprocess.run([sys.executable, "-m", "duckflow", "bench", "server", "--levels", "2,6", "--rounds", "1",
                           "--messages", "1", "--pace", "0.5", "--workers", "2", "--redis", redis_server.url,
                           "--database", database, "--json"], env=env, capture_output=True, text=True, timeout=600)
    assert done.stdout, done.stderr[-2000:]
    data = json.loads(done.stdout)
    assert data["workers"] == 2 and data["throughput_ratio"] > 0
    for run in (data["one_process"], data["n_processes"]):
        assert [lv["sessions"] for lv in run["levels"]] == [2, 6]
        assert all(lv["errors"] == 0 and lv["seq_gaps"] == 0 and lv["messages"] == lv["sessions"]
                   for lv in run["levels"] + run["burst_levels"])
    assert done.returncode == (0 if data["passed"] else 1)


def test_bench_server_refuses_workers_without_the_shared_stores() -> None:
    env = {**os.environ, "PYTHONPATH": SRC}
    done = subprocess.run([sys.executable, "-m", "duckflow", "bench", "server", "--workers", "2"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "--workers needs both" in done.stderr and "Traceback" not in done.stderr
