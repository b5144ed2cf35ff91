"""Every command meets bad input with a one-line error and an exit code: no traceback, no hang."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from duckflow.channels.cli.main import main as cli

DEEP = "[" * 100_000 + "]" * 100_000


def duckflow(*args: str, stdin: str | None = None, env: dict[str, str] | None = None,
             stdout: int | None = None, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    full = dict(os.environ, **(env or {}))
    full.pop("DUCKFLOW_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "duckflow", *args], input=stdin, text=True,
                          stdout=stdout if stdout is not None else subprocess.PIPE,
                          stderr=subprocess.PIPE, env=full, timeout=timeout)


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode not in (0, 70), (proc.returncode, proc.stderr)
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert 1 <= len(lines) <= 2 and (len(lines) == 1 or lines[1].lstrip().startswith("next:"))
    return proc.stderr


def test_protocol_parse_json_refuses_deep_nesting_in_its_result() -> None:
    proc = duckflow("protocol", "parse", "--protocol", "json", "-", stdin=DEEP)
    assert "Traceback" not in proc.stderr and proc.returncode in (0, 1)
    result = json.loads(proc.stdout)
    assert result["ok"] is False and "nests deeper" in result["errors"][0]


def test_protocol_render_on_deeply_nested_input() -> None:
    err = one_line_error(duckflow("protocol", "render", "-", stdin=DEEP))
    assert "nested too deeply" in err


def _config_show(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return duckflow("config", "show", "--workspace", str(tmp_path), env=env, timeout=20)


def test_user_config_that_is_a_folder_bad_utf8_a_device_or_a_fifo(tmp_path: Path) -> None:
    folder = tmp_path / "cfgdir"
    folder.mkdir()
    assert "is a folder" in one_line_error(_config_show(tmp_path, DUCKFLOW_CONFIG=str(folder)))
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b"\xff\xfe[models]\n")
    assert "not UTF-8" in one_line_error(_config_show(tmp_path, DUCKFLOW_CONFIG=str(bad)))
    assert "device" in one_line_error(_config_show(tmp_path, DUCKFLOW_CONFIG="/dev/zero"))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert "FIFO" in one_line_error(_config_show(tmp_path, DUCKFLOW_CONFIG=str(fifo)))
    huge = tmp_path / "huge.toml"
    huge.write_text("# " + "x" * 2_000_000 + "\n")
    assert "larger than" in one_line_error(_config_show(tmp_path, DUCKFLOW_CONFIG=str(huge)))
    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 50_000 + "]" * 50_000 + "\n")
    one_line_error(_config_show(tmp_path, DUCKFLOW_CONFIG=str(deep)))


def test_workspace_config_that_is_a_folder_or_a_link_to_dev_zero(tmp_path: Path) -> None:
    state = tmp_path / ".duckflow"
    (state / "config.toml").mkdir(parents=True)
    assert "is a folder" in one_line_error(_config_show(tmp_path))
    (state / "config.toml").rmdir()
    os.symlink("/dev/zero", state / "config.toml")  # git can store this link
    assert "link" in one_line_error(_config_show(tmp_path))
    (state / "config.toml").unlink()
    real = tmp_path / "elsewhere.toml"
    real.write_text("[companion]\nlanguage = 'ja'\n")
    os.symlink(real, state / "config.toml")  # even a harmless-looking link is not followed
    assert "link" in one_line_error(_config_show(tmp_path))


def test_a_workspace_state_folder_that_is_a_link_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "config.toml").write_text("[companion]\nlanguage = 'ja'\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    os.symlink(elsewhere, ws / ".duckflow")
    err = one_line_error(duckflow("config", "show", "--workspace", str(ws), timeout=20))
    assert "link" in err


def test_a_workspace_file_cannot_name_files_outside_the_workspace(tmp_path: Path) -> None:
    state = tmp_path / ".duckflow"
    state.mkdir()
    for bad in ("/etc/passwd", "../outside.toml", "link/x.toml"):
        (state / "config.toml").write_text(f"[companion]\ntransitions_file = {bad!r}\n")
        if bad.startswith("link"):
            os.symlink("/etc", tmp_path / "link")
        assert "outside the workspace" in one_line_error(_config_show(tmp_path)), bad
    (state / "config.toml").write_text("[companion]\ntransitions_file = 'rules/t.toml'\n")
    proc = _config_show(tmp_path)
    assert proc.returncode == 0 and str(tmp_path / "rules" / "t.toml") in proc.stdout


@pytest.mark.parametrize("ttl", ["nan", "inf", "1e308", "-1", "0"])
def test_autoapprove_ttl_must_be_a_sane_number(tmp_path: Path, ttl: str) -> None:
    err = one_line_error(duckflow("autoapprove", "on", "--ttl", ttl))
    assert "TTL must be" in err


def _closed_pipe_run(*args: str) -> subprocess.CompletedProcess[str]:
    """Run with stdout a pipe whose reader is already gone (what `| head -1` ends up doing)."""
    r, w = os.pipe()
    os.close(r)
    try:
        return duckflow(*args, stdout=w)
    finally:
        os.close(w)


def test_broken_pipe_is_quiet(tmp_path: Path) -> None:
    assert cli(["run", "Create hello.py", "-w", str(tmp_path), "--model", "scripted:demo",
                "--json"]) == 4  # leaves a session waiting for approval
    for args in (("status", "-w", str(tmp_path)), ("approvals", "list", "--json"),
                 ("sessions", "--json"), ("--help",)):
        proc = _closed_pipe_run(*args)
        assert proc.stderr == "" and proc.returncode == 141, (args, proc.stderr)


def _boom_command(monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse
    import types

    from duckflow.channels.cli import main as main_mod

    mod = types.ModuleType("duckflow_test_boom")

    def configure(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--n", type=int, default=1)

    def run(args: argparse.Namespace) -> int:
        return {}["missing"]  # a bug nobody wrote a message for

    mod.configure = configure  # type: ignore[attr-defined]
    mod.run = run  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "duckflow_test_boom", mod)
    monkeypatch.setitem(main_mod.COMMANDS, "boom", ("duckflow_test_boom", "fails"))


def test_an_unexpected_error_is_one_line_and_debug_shows_the_traceback(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _boom_command(monkeypatch)
    monkeypatch.delenv("DUCKFLOW_DEBUG", raising=False)
    assert cli(["boom"]) == 70
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error: KeyError" in err and "--debug" in err
    assert len(err.strip().splitlines()) == 2
    assert cli(["boom", "--debug"]) == 70
    assert "Traceback" in capsys.readouterr().err
    assert cli(["--debug", "boom"]) == 70
    assert "Traceback" in capsys.readouterr().err
    monkeypatch.setenv("DUCKFLOW_DEBUG", "1")
    assert cli(["boom"]) == 70
    assert "Traceback" in capsys.readouterr().err


def test_a_workspace_persona_link_is_not_followed(tmp_path: Path) -> None:
    from duckflow.prompts.render import read_workspace_persona

    secret = tmp_path / "id_rsa"
    secret.write_text("PRIVATE KEY MATERIAL")
    ws = tmp_path / "ws"
    ws.mkdir()
    os.symlink(secret, ws / "CHAT_PERSONA.md")
    assert read_workspace_persona(ws) is None
    (ws / "CHAT_PERSONA.md").unlink()
    os.symlink("/dev/zero", ws / "CHAT_PERSONA.md")  # would hang a plain read
    proc = duckflow("run", "Create hello.py", "-w", str(ws), "--model", "scripted:demo",
                    "--auto-approve-workspace", "--json", timeout=60)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr
    (ws / "CHAT_PERSONA.md").unlink()
    (ws / "CHAT_PERSONA.md").write_text("Be brief.")
    assert read_workspace_persona(ws) == "Be brief."
