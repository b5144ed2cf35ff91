"""What the bubblewrap box binds for a Python interpreter: its bin/ and lib/, never the folder
around it (a repository's `.venv/pyvenv.cfg`, a toolchain's `bin/python3` wrapper or a PATH
entry inside the workspace cannot make a home's dotfolder with credentials visible)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from duckflow.config import WorkspaceConfig
from duckflow.workspace.sandbox import bwrap_argv
from duckflow.workspace.shell import bwrap_usable, execute_shell, run_tests

BWRAP = WorkspaceConfig(sandbox="bwrap")
pytestmark = pytest.mark.skipif(not bwrap_usable(), reason="bubblewrap missing or unusable here")
SECRET = "token = \"cargo-registry-secret-5521\"\n"


@pytest.fixture
def home() -> Iterator[Path]:
    """A person's home outside /tmp (the box's /tmp is its own, which would hide it anyway)."""
    base = Path(tempfile.mkdtemp(prefix="duckflow-home-test-", dir="/var/tmp"))
    try:
        yield _home_with_credentials(base / "home")
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _home_with_credentials(home: Path) -> Path:
    """A person's home with `~/.cargo/credentials.toml` and a `~/.cargo/bin` (as rustup makes)."""
    (home / ".cargo" / "bin").mkdir(parents=True)
    (home / ".cargo" / "credentials.toml").write_text(SECRET)
    return home


def _bound(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv) if a == "--ro-bind"]


async def test_a_planted_pyvenv_cfg_cannot_bind_a_dotfolder_with_credentials(
        tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a cloned repository ships `.venv/pyvenv.cfg` whose `home` names a folder in ~/.cargo:
    # the old rule bound that folder's parent (~/.cargo) read-only for every command
    monkeypatch.setenv("HOME", str(home))
    ws = tmp_path / "ws"
    (ws / ".venv").mkdir(parents=True)
    (ws / ".venv" / "pyvenv.cfg").write_text(f"home = {home}/.cargo/bin\nversion = 3.11.0\n")
    (ws / "tests").mkdir()
    (ws / "tests" / "conftest.py").write_text(
        f"print(open({str(home / '.cargo' / 'credentials.toml')!r}).read())\n")
    cred = home / ".cargo" / "credentials.toml"
    result = await execute_shell(ws, BWRAP, f"cat {cred}; ls {home}/.cargo", timeout=30)
    assert result.mode == "bwrap"
    assert "cargo-registry-secret" not in result.stdout and "credentials" not in result.stdout
    assert "No such file" in result.stderr
    # the test runner of that repository (its conftest.py runs inside the box) cannot read it
    tests = await run_tests(ws, BWRAP, timeout=60)
    assert "cargo-registry-secret" not in tests.stdout + tests.stderr
    assert not any(str(home) in b for b in _bound(bwrap_argv(ws, ["/bin/sh", "-c", "python3 x.py"])))


async def test_a_toolchain_python3_on_path_does_not_expose_the_folder_around_it(
        tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `python3` found on PATH in ~/.cargo/bin (any wrapper there): the old rule bound ~/.cargo
    if not os.path.exists("/usr/bin/python3"):
        pytest.skip("needs /usr/bin/python3 for the wrapper to start")
    wrapper = home / ".cargo" / "bin" / "python3"
    wrapper.write_text("#!/bin/sh\nexec /usr/bin/python3 \"$@\"\n")
    wrapper.chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{wrapper.parent}:/usr/bin:/bin")
    ws = tmp_path / "ws"
    ws.mkdir()
    cred = home / ".cargo" / "credentials.toml"
    command = f"python3 -c \"import sys; print(sys.version_info[0]); print(open('{cred}').read())\""
    result = await execute_shell(ws, BWRAP, command, timeout=60)
    assert result.mode == "bwrap" and result.stdout.startswith("3"), result  # python3 still runs
    assert "cargo-registry-secret" not in result.stdout and "No such file" in result.stderr
    bound = _bound(bwrap_argv(ws, ["/bin/sh", "-c", "python3 x.py"]))
    assert not any(b == str(home / ".cargo") or b.startswith(str(home)) for b in bound), bound


async def test_python3_from_a_path_entry_inside_the_workspace_never_runs_outside_the_box(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the person's PATH holds a workspace folder (`./bin`, node_modules/.bin): a repository's
    # `bin/python3` must not be run outside the box to ask where it lives
    ws = tmp_path / "ws"
    (ws / "bin").mkdir(parents=True)
    outside = tmp_path / "ran-outside"
    (ws / "bin" / "python3").write_text(f"#!/bin/sh\ntouch {outside}\necho /usr/bin/python3\necho /usr\n")
    (ws / "bin" / "python3").chmod(0o755)
    monkeypatch.setenv("PATH", f"{ws / 'bin'}:bin:/usr/bin:/bin")
    argv = bwrap_argv(ws, ["/bin/sh", "-c", "python3 x.py"])
    await execute_shell(ws, BWRAP, "python3 -c 'print(1)'", timeout=30)
    assert not outside.exists()
    assert not any(b.startswith(str(tmp_path)) and ".duckflow" not in b for b in _bound(argv))


def test_only_bin_and_lib_of_an_installation_are_bound(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # an installation outside /usr (its landmark lib/python3.N/os.py): bin/ and lib/ are shown,
    # not what lies next to them
    prefix = tmp_path / "opt" / "py311"
    (prefix / "lib" / "python3.11").mkdir(parents=True)
    (prefix / "lib" / "python3.11" / "os.py").write_text("")
    (prefix / "bin").mkdir()
    (prefix / "secrets.env").write_text("X=1\n")
    exe = prefix / "bin" / "python3"
    exe.write_text(f"#!/bin/sh\necho {exe}\necho {prefix}\n")  # answers the probe like python
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{exe.parent}:/usr/bin:/bin")
    ws = tmp_path / "ws"
    ws.mkdir()
    argv = bwrap_argv(ws, ["/bin/sh", "-c", "python3 t.py"])
    bound = _bound(argv)
    assert str(prefix / "bin") in bound and str(prefix / "lib") in bound
    assert str(prefix) not in bound and str(tmp_path / "opt") not in bound
    assert f"{prefix / 'bin'}:" in argv[argv.index("PATH", argv.index("HOME")) + 1]
    assert str(prefix) not in " ".join(_bound(bwrap_argv(ws, ["/bin/sh", "-c", "ls -la"])))


def test_a_python3_link_in_an_unbound_folder_runs_its_target_in_the_box(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Homebrew-style: ~/brew/bin/python3 -> ../Cellar/py/bin/python3 (only the Cellar is bound)
    prefix = tmp_path / "brew" / "Cellar" / "py"
    (prefix / "lib" / "python3.12").mkdir(parents=True)
    (prefix / "lib" / "python3.12" / "os.py").write_text("")
    (prefix / "bin").mkdir()
    exe = prefix / "bin" / "python3"
    link = tmp_path / "brew" / "bin" / "python3"
    link.parent.mkdir()
    link.symlink_to(exe)
    exe.write_text(f"#!/bin/sh\necho {link}\necho {prefix}\n")
    exe.chmod(0o755)
    ws = tmp_path / "ws"
    ws.mkdir()
    argv = bwrap_argv(ws, [str(link), "-m", "pytest"])
    assert argv[argv.index("--") + 1] == str(exe) and str(tmp_path / "brew" / "bin") not in _bound(argv)


async def test_the_sandboxed_python3_is_the_persons_with_its_packages(tmp_path: Path) -> None:
    # what binding was for: `python3` in the box is the one the person's PATH names (a pyenv
    # shim resolved to its interpreter), with the packages it has outside
    probe = "import sys; print(sys.prefix)"
    python = shutil.which("python3") or "python3"
    outside = subprocess.run([python, "-c", probe], capture_output=True, text=True, cwd="/",
                             timeout=60).stdout.strip()
    result = await execute_shell(tmp_path, BWRAP, f'python3 -c "{probe}"', timeout=60)
    assert result.mode == "bwrap" and result.stdout.strip() == outside, result
