"""`duckflow acp` from the command line: in --help, and one line (no traceback) when the acp extra is missing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from duckflow.channels.cli.main import COMMANDS

REPO = Path(__file__).resolve().parents[3]


def test_acp_is_a_command() -> None:
    assert COMMANDS["acp"][0] == "duckflow.channels.cli.acp_cmd"


def test_without_the_extra_it_says_how_to_install_it(tmp_path: Path) -> None:
    code = ("import sys; sys.modules['acp'] = None\n"  # as if agent-client-protocol were not installed
            "from duckflow.channels.cli.main import main\n"
            f"sys.exit(main(['acp', '-w', {str(tmp_path)!r}]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={"PYTHONPATH": str(REPO / "src"), "DUCKFLOW_HOME": str(tmp_path / "home"),
                               "DUCKFLOW_CONFIG": "/dev/null"})
    assert proc.returncode == 1 and proc.stdout == ""
    assert "pip install 'duckflow[acp]'" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) <= 2
