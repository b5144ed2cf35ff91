"""`duckflow workspace check`: exit 0 allowed, 3 refused, 4 needs approval; JSON says why."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from duckflow.channels.cli.main import main


def _check(capsys: pytest.CaptureFixture[str], root: Path, path: str, op: str) -> tuple[int, dict]:
    code = main(["workspace", "check", path, "--op", op, "--root", str(root), "--json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(("path", "op", "exit_code", "code"), [
    ("src/app.py", "read", 0, "ok"),
    ("src/new.py", "write", 0, "ok"),
    ("../outside/secret.txt", "read", 3, "dotdot_escape"),
    ("escape/secret.txt", "read", 3, "symlink_outside"),
    ("/etc/passwd", "read", 3, "outside_workspace"),
    (".git/config", "write", 3, "protected"),
    ("run.sh", "write", 3, "dangerous_extension"),
    ("run.sh", "execute", 4, "dangerous_extension"),
    (".", "delete", 3, "workspace_root"),
    ("pipe", "read", 3, "special_file"),
])
def test_check_exit_codes_and_json(root: Path, capsys: pytest.CaptureFixture[str], path: str,
                                   op: str, exit_code: int, code: str) -> None:
    got, out = _check(capsys, root, path, op)
    assert got == exit_code
    assert out["code"] == code
    assert set(out) >= {"allowed", "needs_approval", "code", "reason", "resolved"}
    assert out["allowed"] == (exit_code != 3)
    assert out["needs_approval"] == (exit_code == 4)
    if out["resolved"]:
        assert out["resolved"].startswith(str(root))


def test_approve_mode_from_the_user_config(root: Path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    user_cfg = tmp_path / "user-config.toml"
    user_cfg.write_text('[workspace]\ndangerous_extensions_mode = "approve"\n')
    monkeypatch.setenv("DUCKFLOW_CONFIG", str(user_cfg))
    code, out = _check(capsys, root, "deploy.ps1", "write")
    assert code == 4 and out["needs_approval"] and out["allowed"]


def test_a_workspace_config_cannot_loosen_the_guard(root: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    (root / ".duckflow").mkdir()
    (root / ".duckflow" / "config.toml").write_text('[workspace]\ndangerous_extensions = []\n')
    code = main(["workspace", "check", "deploy.ps1", "--op", "write", "--root", str(root)])
    assert code != 0
    assert "own config" in capsys.readouterr().err


def test_human_output_and_the_real_command(root: Path) -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.run([sys.executable, "-m", "duckflow", "workspace", "check",
                           "../../etc/shadow", "--op", "read", "--root", str(root)],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 3
    assert proc.stdout.startswith("refused [dotdot_escape]")


def test_search_command(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["workspace", "search", "hello", "--root", str(root)]) == 0
    assert capsys.readouterr().out.startswith("src/app.py:1: print('hello')")
    assert main(["workspace", "search", "nothingmatches", "--root", str(root), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["results"] == []
