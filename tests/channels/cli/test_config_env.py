"""DUCKFLOW_CONFIG: a misspelled path is said in one line with the next step; /dev/null means no file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def duckflow(*args: str, config: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DUCKFLOW_CONFIG", "DUCKFLOW_DEBUG")}
    if config is not None:
        env["DUCKFLOW_CONFIG"] = config
    return subprocess.run([sys.executable, "-m", "duckflow", *args], capture_output=True,
                          text=True, timeout=60, env=env)


def test_a_misspelled_duckflow_config_is_said_with_the_next_step(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('[loop]\nmax_loops = 7\n')
    typo = tmp_path / "confg.toml"
    proc = duckflow("config", "show", "--section", "loop", config=str(typo))
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    assert f"DUCKFLOW_CONFIG names {typo}, which does not exist; the defaults apply" in lines[0]
    assert "next:" in lines[0] and "/dev/null" in lines[0]
    assert any("max_loops" in ln and "7" not in ln for ln in proc.stdout.splitlines())  # the defaults


def test_dev_null_means_no_config_file_and_the_default_path_may_be_missing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))  # no default file there
    for config in (os.devnull, None):
        proc = duckflow("config", "show", config=config)
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
        assert "loop.max_loops" in proc.stdout


def test_an_existing_duckflow_config_is_read(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text('[loop]\nmax_loops = 7\n')
    proc = duckflow("config", "show", "--section", "loop", config=str(cfg))
    assert proc.returncode == 0, proc.stderr
    assert any("max_loops" in ln and "7" in ln for ln in proc.stdout.splitlines())
