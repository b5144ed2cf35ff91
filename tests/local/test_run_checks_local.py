"""`duckflow run` with the bundled model ends honestly: a module of functions is done only once a
call of its function (or a test) checked it, and the result says what was checked."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from duckflow.channels.cli.main import main as cli
from tests.local.conftest import needs_llama

pytestmark = [pytest.mark.local_model, needs_llama, pytest.mark.timeout(1800)]


def test_run_of_a_function_task_says_what_checked_it(default_model_home: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    rc = cli(["run", "Create stats.py with a function mean(numbers) that returns the average of a list of numbers.",
              "-w", str(ws), "--model", "local:default", "--auto-approve-workspace", "--json"])
    out = capsys.readouterr().out
    result = json.loads(out.strip().splitlines()[-1])
    check = "import stats; assert stats.mean([1, 2, 3]) == 2"
    works = subprocess.run([sys.executable, "-c", check], cwd=ws, capture_output=True, text=True, timeout=30)
    kind = (result.get("result") or {}).get("kind")
    if rc == 0 and result["ok"] and kind == "done":  # a "done" is only ever a checked one, and then the code works
        assert "checked: python3" in out, out[-2000:]
        assert works.returncode == 0, (works.stderr, (ws / "stats.py").read_text())
    elif rc == 0 and result["ok"]:  # finished, and says it is not verified (the task names no value)
        assert kind == "not_verified" and "Finished, not verified — " in out, out[-2000:]
    else:  # not done: it says why (a failed or missing check), never "Done"
        assert "check failed" in out or "not checked" in out or "waiting for approval" in out, out[-2000:]
