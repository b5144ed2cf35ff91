"""Ollama not running: said once, with a next step that works (not `duckflow chat`, which fails the same way)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[3] / "src"


def _closed_port() -> int:
    with socket.socket() as s:  # a port nothing listens on (bound, then released)
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_ollama_down_is_said_once_with_a_next_step_that_works(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {**os.environ, "PYTHONPATH": str(SRC), "DUCKFLOW_HOME": str(tmp_path / "home"),
           "DUCKFLOW_CONFIG": os.devnull, "OLLAMA_HOST": f"http://127.0.0.1:{_closed_port()}", "COLUMNS": "200"}
    done = subprocess.run([sys.executable, "-m", "duckflow", "run", "create hello.py", "-w", str(ws),
                           "--model", "ollama:qwen2.5-coder:7b"], env=env, capture_output=True, text=True, timeout=120)
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert out.count("Ollama is down") == 1, out
    assert "ollama serve" in out and f"duckflow run --resume -w {ws}" in out
    assert "duckflow chat -w" not in out and "Traceback" not in out
    assert "0 tokens in" not in out  # no figures for a turn no model answered
