"""`duckflow run` exactly as a person (or a hidden check) runs it, with the bundled model, on a
held-out task: an addition to a file that exists, checked by importing the result."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from duckflow.channels.cli.main import main as cli
from tests.local.conftest import needs_llama

pytestmark = [pytest.mark.local_model, needs_llama, pytest.mark.timeout(1800)]


def test_run_adds_a_function_and_keeps_the_rest_of_the_file(default_model_home: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "mathutils.py").write_text("def square(x):\n    return x * x\n")
    rc = cli(["run", "Add a function double(x) to mathutils.py.", "-w", str(ws),
              "--model", "local:default", "--auto-approve-workspace", "--json"])
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert rc == 0 and result["ok"], result
    check = "import mathutils as m; assert m.double(4) == 8 and m.square(3) == 9"
    out = subprocess.run([sys.executable, "-c", check], cwd=ws, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, (out.stderr, (ws / "mathutils.py").read_text())
