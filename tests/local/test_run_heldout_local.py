"""`duckflow run` exactly as a person (or a hidden check) runs it, with the bundled model, on a
held-out task: a fix in a file that exists (an edit with a SEARCH/REPLACE hunk), checked by
importing the result — the other function of the file must still work."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from duckflow.channels.cli.main import main as cli
from tests.local.conftest import needs_llama

pytestmark = [pytest.mark.local_model, needs_llama, pytest.mark.timeout(1800)]


def test_run_fixes_a_function_and_keeps_the_rest_of_the_file(default_model_home: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n")
    rc = cli(["run", "Fix the bug in calc.py so that add returns the sum.", "-w", str(ws),
              "--model", "local:default", "--auto-approve-workspace", "--json"])
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert rc == 0 and result["ok"], result
    check = "import calc; assert calc.add(2, 3) == 5 and calc.sub(5, 3) == 2"
    out = subprocess.run([sys.executable, "-c", check], cwd=ws, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, (out.stderr, (ws / "calc.py").read_text())
