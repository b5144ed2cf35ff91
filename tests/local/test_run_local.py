"""`duckflow run` with the bundled model in process: a create-and-run task, checked by running it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from duckflow.channels.cli.main import main as cli
from tests.local.conftest import needs_llama

pytestmark = [pytest.mark.local_model, needs_llama, pytest.mark.timeout(1800)]


def test_run_creates_and_runs_a_script(default_model_home: Path, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    rc = cli(["run", "Create square.py that prints the square of 12 and run it", "-w", str(ws),
              "--model", "local:default", "--auto-approve-workspace", "--json"])
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert rc == 0 and result["ok"] and result["model"] == "local:default", result
    out = subprocess.run([sys.executable, "square.py"], cwd=ws, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and "144" in out.stdout


def test_run_in_dml_single_call_creates_and_runs_a_script(default_model_home: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    rc = cli(["run", "Create hello.py that prints Hello, World! and run it", "-w", str(ws),
              "--model", "local:default", "--codec", "dml", "--mode", "single-call",
              "--auto-approve-workspace", "--json"])
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert rc == 0 and result["ok"], result
    out = subprocess.run([sys.executable, "hello.py"], cwd=ws, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and "hello" in out.stdout.lower()
