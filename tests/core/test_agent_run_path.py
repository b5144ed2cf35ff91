"""core.agent binds its run path on the first run; the names it imported before stay importable."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import duckflow.core.agent as agent_module

SRC = Path(__file__).resolve().parents[2] / "src"


def test_every_run_path_name_is_the_object_of_its_module() -> None:
    for name, module in agent_module._RUN_PATH.items():
        assert getattr(agent_module, name) is getattr(importlib.import_module(module), name), name


def test_a_name_core_agent_used_to_import_still_imports_from_it_before_any_run() -> None:
    code = ("from duckflow.core.agent import AgentOutcome, RunResult\n"
            "import duckflow.core.agent as a\n"
            "print(AgentOutcome.__module__, RunResult.__module__, a._run_path_loaded)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(SRC)}, check=True)
    assert out.stdout.split() == ["duckflow.core.results", "duckflow.core.results", "False"]
