"""Issue 32: the listed read-only programs read only the workspace and take no orders from it.

End to end through `duckflow run --auto-approve-workspace` with a scripted model, real git,
real files and symlinks, with bubblewrap and without it: a read through a link out of the
workspace waits for a person, git runs none of the programs a repository's config names (nor
those of a folder that only looks like a repository), a getopt abbreviation is read as the
option it abbreviates, and the test command runs only as the project calls it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from duckflow.channels.cli.main import main as cli
from duckflow.gate import Gate
from duckflow.gate.allowlist import unlisted
from duckflow.llm.scripted import tool_call
from tests.helpers.companion import decision

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("first line\nsecond line\n")
    (root / "keep.txt").write_text("precious\n")
    return root


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    outside = tmp_path / "home" / ".ssh"
    outside.mkdir(parents=True)
    key = outside / "id_rsa"
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nSECRET-KEY-MATERIAL\n")
    return key


def _script(name: str, **args: Any) -> list[Any]:
    return [decision("EXECUTION", "base_main_specialized", rationale="do it"), tool_call(name, **args),
            decision("DONE", next_step="done", rationale="done")]


def _run(capsys: pytest.CaptureFixture[str], root: Path) -> tuple[int, dict[str, Any], str]:
    capsys.readouterr()
    rc = cli(["run", "look at the project", "-w", str(root), "--model", "scripted:evil", "--json",
              "--auto-approve-workspace"])
    cap = capsys.readouterr()
    lines = cap.out.strip().splitlines()
    return rc, json.loads(lines[-1]) if lines else {}, cap.out + cap.err


def _shell(root: Path, command: str, mode: str) -> str:
    """What the workspace's shell tool prints for `command` (stdout and stderr)."""
    import asyncio

    from duckflow.config import WorkspaceConfig
    from duckflow.workspace.tools import workspace_tools

    shell = {t.name: t for t in workspace_tools(root, WorkspaceConfig(sandbox=mode))}["execute_shell"]  # type: ignore[arg-type]
    result = asyncio.run(shell.invoke({"command": command}))
    return f"{result['stdout']}{result['stderr']}"


def _job(home: Path) -> Any:
    with Gate(home / "gate.db") as gate:
        return gate.history(1)[0]


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                   env={"PATH": "/usr/bin:/bin", "HOME": str(root), "GIT_CONFIG_NOSYSTEM": "1",
                        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t"})


def _hostile_repo(root: Path, marker: Path) -> None:
    """A cloned repository whose config runs a program on status, diff, log and show."""
    _git(root, "init", "-q", ".")
    (root / ".gitattributes").write_text("*.txt diff=evil filter=evil\n")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "first")
    (root / "notes.txt").write_text("first line\nsecond line\nthird\n")
    prog = root / "evil.sh"
    prog.write_text(f"#!/bin/sh\necho ran >> {marker}\ncat\n")
    prog.chmod(0o755)
    with open(root / ".git" / "config", "a") as fh:
        fh.write(f'[core]\n\tfsmonitor = "{prog}"\n\tpager = "{prog}"\n'
                 f'[diff]\n\texternal = "{prog}"\n[diff "evil"]\n\ttextconv = "{prog}"\n'
                 f'\tcommand = "{prog}"\n[filter "evil"]\n\tclean = "{prog}"\n\tprocess = "{prog}"\n'
                 f'[log]\n\tshowSignature = true\n[gpg]\n\tprogram = "{prog}"\n')


# -------------------------------------------------------------- reads stay in the workspace


@pytest.mark.parametrize("command", ["cat notes.txt", "head -n 1 notes.txt", "grep -n KEY notes.txt",
                                     "wc -l < notes.txt", "cat *.txt", "grep -R KEY .", "diff -r docs keep.txt"])
def test_a_read_through_a_link_out_of_the_workspace_waits_for_a_person(
        ws: Path, model: Any, mode: str, secret: Path, capsys: pytest.CaptureFixture[str],
        _isolated_duckflow_home: Path, command: str) -> None:
    (ws / "notes.txt").unlink()
    (ws / "notes.txt").symlink_to(secret)
    (ws / "docs").mkdir()
    (ws / "docs" / "key").symlink_to(secret)
    model["script"] = _script("execute_shell", command=command)
    rc, out, shown = _run(capsys, ws)
    assert rc == 4 and out["ending"] == "approval", out
    assert "SECRET-KEY-MATERIAL" not in shown
    job = _job(_isolated_duckflow_home)
    said = job.request.rationale + out["message"]
    assert job.status == "pending" and ("outside the workspace" in said or "out of the workspace" in said)


def test_a_plain_read_inside_the_workspace_still_runs_unasked(
        ws: Path, model: Any, mode: str, capsys: pytest.CaptureFixture[str]) -> None:
    (ws / "docs").mkdir()
    (ws / "docs" / "a.md").write_text("alpha\n")
    (ws / "docs" / "link.md").symlink_to("a.md")  # a link that stays inside is fine
    model["script"] = _script("execute_shell", command="cat notes.txt docs/link.md && grep -R alpha docs")
    rc, out, _ = _run(capsys, ws)
    assert rc == 0, out
    shown = _shell(ws, "cat notes.txt docs/link.md && grep -R alpha docs", mode)
    assert "second line" in shown and "alpha" in shown


def test_sort_output_by_a_getopt_abbreviation_never_empties_a_file(
        ws: Path, model: Any, mode: str, capsys: pytest.CaptureFixture[str],
        _isolated_duckflow_home: Path) -> None:
    for command in ("sort --o=keep.txt notes.txt", "sort --ou keep.txt notes.txt"):
        model["script"] = _script("execute_shell", command=command)
        rc, out, _ = _run(capsys, ws)
        assert rc == 4 and out["ending"] == "approval", (command, out)
        assert (ws / "keep.txt").read_text() == "precious\n"


# ------------------------------------------------------------ git takes no orders from the repo


@pytest.mark.parametrize("command", ["git status", "git diff", "git log -p -1", "git show HEAD",
                                     "git diff --stat && git status --short"])
def test_git_reads_run_none_of_the_programs_a_repositorys_config_names(
        ws: Path, model: Any, mode: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        command: str) -> None:
    marker = tmp_path / "ran.log"
    _hostile_repo(ws, marker)
    model["script"] = _script("execute_shell", command=command)
    rc, out, _ = _run(capsys, ws)
    assert rc == 0, out  # still what a person expects to run unasked
    assert not marker.exists(), marker.read_text()
    shown = _shell(ws, command, mode)
    assert not marker.exists(), marker.read_text()
    if command in ("git diff", "git log -p -1"):
        assert "+third" in shown or "first" in shown, shown  # git's own output


@pytest.mark.parametrize("where", [".", "download"])
def test_a_folder_that_only_looks_like_a_repository_is_not_one(
        ws: Path, model: Any, mode: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        where: str) -> None:
    """The workspace itself, or a folder in it, has `HEAD`, `config` and `objects/` (a download
    that looks like a bare repository) and a config that names a program."""
    marker = tmp_path / "ran.log"
    fake = ws / where
    (fake / "objects").mkdir(parents=True)
    (fake / "refs").mkdir()
    (fake / "HEAD").write_text("ref: refs/heads/main\n")
    prog = tmp_path / "evil.sh"
    prog.write_text(f"#!/bin/sh\necho ran >> {marker}\n")
    prog.chmod(0o755)
    (fake / "config").write_text(f'[core]\n\tbare = false\n\tworktree = {ws}\n\tfsmonitor = "{prog}"\n')
    model["script"] = _script("execute_shell", command="git status")
    _run(capsys, ws)
    assert "not a git repository" in _shell(ws, "git status", mode)
    assert not marker.exists()


# ------------------------------------------------------------------- the test command as is


@pytest.mark.parametrize("command", ["make test SHELL=/tmp/x.sh", "make test -f other.mk", "go test -exec ./x.sh ./...",
                                     "cargo test --config target.x.runner='./x.sh'",
                                     "npm test --script-shell=./x.sh", "pytest -p evilplugin",
                                     "python3 -m pytest --rootdir=/ -q", "pytest -c /tmp/x.ini",
                                     "pytest --basetemp=keep"])
def test_the_test_command_takes_no_option_from_the_model(command: str, ws: Path) -> None:
    why = unlisted(command, plain=False, root=ws)
    assert why != "", command


@pytest.mark.parametrize("command", ["pytest", "pytest -q", "python3 -m pytest -x -q tests",
                                     "pytest tests/test_a.py::test_one -k 'one and not two'",
                                     "npm test", "npm test --silent", "make test", "cargo test",
                                     "cargo test parser", "go test ./...", "go test -v -run TestX ./pkg"])
def test_the_test_command_as_a_project_calls_it_is_listed(command: str, ws: Path) -> None:
    (ws / "tests").mkdir()
    (ws / "pkg").mkdir()
    assert unlisted(command, plain=False, root=ws) == "", command


def test_make_test_with_a_shell_override_is_asked_end_to_end(
        ws: Path, model: Any, mode: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        _isolated_duckflow_home: Path) -> None:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    marker = tmp_path / "ran.log"
    (ws / "Makefile").write_text("test:\n\t@echo testing\n")
    (ws / "x.sh").write_text(f"#!/bin/sh\necho ran >> {marker}\n")
    (ws / "x.sh").chmod(0o755)
    model["script"] = _script("execute_shell", command="make test SHELL=./x.sh")
    rc, out, _ = _run(capsys, ws)
    assert rc == 4 and out["ending"] == "approval" and not marker.exists(), out
    assert "as the project calls it" in _job(_isolated_duckflow_home).request.rationale + out["message"]


def test_git_is_not_chained_with_the_tests(ws: Path) -> None:
    assert "on its own" in unlisted("git status && pytest -q", plain=False, root=ws)
    assert unlisted("git status && cat notes.txt | wc -l", plain=False, root=ws) == ""
