"""The box's copy-on-write staging area (workspace/staging.py) with real bubblewrap and overlayfs:
the command never writes the workspace; every lasting effect is listed; only what is covered is applied."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from duckflow.workspace.staging import Staging, overlay_usable, protected

BIG = 17 * 1024 * 1024


def _boxed(root: Path, command: str, covered: tuple[str, ...] = ()):  # type: ignore[no-untyped-def]
    from duckflow.workspace.shell import run_command

    if not overlay_usable():
        pytest.skip("bubblewrap on an overlay cannot run here (user namespaces or overlayfs)")
    st = Staging(root)
    try:
        result = asyncio.run(run_command(root, command, timeout=30, limit=20_000, staging=str(st.dir)))
        fx = st.changes(covered)
        st.apply(fx)
        return result, fx
    finally:
        st.close()


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DUCKFLOW_HOME", str(tmp_path / "home"))
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "keep.txt").write_text("precious\n")
    (root / "mine.txt").write_text("old\n")
    (root / "big.bin").write_bytes(b"x" * BIG)
    for i in range(300):
        (root / "src" / f"m{i}.py").write_text(f"X = {i}\n")
    (root / ".git" / "objects").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    (root / ".git" / "objects" / "ab").write_text("obj")
    (root / ".venv" / "lib").mkdir(parents=True)
    return root


def test_nothing_uncovered_changes_however_many_and_however_big(ws: Path) -> None:
    cmd = ("rm -rf src big.bin; echo bad > keep.txt; chmod 600 mine.txt; echo new > mine.txt; "
           "echo report > report.txt; mkdir out && echo r > out/r.txt; echo k >> .git/config; "
           "rm -rf .git/objects; echo 'import os' > .venv/lib/evil.pth; echo x > conftest.py; "
           "mkdir -p pkg/__pycache__ && echo x > pkg/__pycache__/m.cpython-311.pyc; "
           "mkdir .pytest_cache && echo c > .pytest_cache/x; ln -s /etc/passwd out/pw; true")
    result, fx = _boxed(ws, cmd, covered=("mine.txt",))
    assert result.exit_code == 0 and result.mode == "bwrap", result
    # the workspace: only the new outputs and the covered file changed
    assert (ws / "keep.txt").read_text() == "precious\n"
    assert (ws / "big.bin").stat().st_size == BIG and len(list((ws / "src").iterdir())) == 300
    assert (ws / ".git" / "config").read_text() == "[core]\n" and (ws / ".git" / "objects" / "ab").exists()
    assert not (ws / ".venv" / "lib" / "evil.pth").exists() and not (ws / "conftest.py").exists()
    assert not (ws / "pkg" / "__pycache__").exists() and not (ws / ".pytest_cache").exists()
    assert not os.path.lexists(ws / "out" / "pw")
    assert (ws / "report.txt").read_text() == "report\n" and (ws / "out" / "r.txt").read_text() == "r\n"
    assert (ws / "mine.txt").read_text() == "new\n"
    # every lasting effect is listed; what was not applied is held for a person
    held = {(c.what, c.path) for c in fx.held}
    assert {("removed", "big.bin"), ("removed", "src"), ("changed", "keep.txt"),
            ("created", "conftest.py"), ("created", "pkg/__pycache__/m.cpython-311.pyc"),
            ("created", "out/pw")} <= held, held
    assert ("removed", "src/m299.py") in held  # each file of a removed folder is named
    assert {c.path for c in fx.kept} >= {"report.txt", "out", "out/r.txt", "mine.txt"}
    assert fx.dropped == 1  # .pytest_cache/x, dropped and counted
    listing = "\n".join(fx.listing())
    assert "changed keep.txt: NOT applied" in listing and "created report.txt: kept" in listing
    assert "tool caches" in listing


def test_the_box_has_no_network_a_throwaway_home_and_bytecode_outside(
        ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    (ws / "calc.py").write_text("X = 1\n")
    result, fx = _boxed(ws, "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", 9))' "
                            "2>/dev/null; echo net=$?; echo $HOME; python3 -c 'import calc'; "
                            "echo key > $HOME/.bashrc; true")
    assert "net=1" in result.stdout and "/tmp/home" in result.stdout, result
    assert not (ws / "__pycache__").exists() and fx.held == []
    assert list((tmp_path / "home" / "pycache").rglob("calc*.pyc"))  # the cache outside the workspace


def test_a_folder_removed_and_made_again_lists_what_it_held(ws: Path) -> None:
    _, fx = _boxed(ws, "rm -rf src && mkdir src && echo n > src/new.py")
    held = {(c.what, c.path) for c in fx.held}
    assert ("removed", "src/m0.py") in held and ("removed", "src/m299.py") in held
    assert (ws / "src" / "m0.py").read_text() == "X = 0\n"
    assert (ws / "src" / "new.py").read_text() == "n\n"  # a new file: kept, and listed
    assert [c.path for c in fx.kept] == ["src/new.py"]


def test_apply_never_writes_through_a_link(ws: Path, tmp_path: Path) -> None:
    """A covered path whose folder became a link to outside is not written (said so)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / "sub").mkdir()
    (ws / "sub" / "a.txt").write_text("a")
    st = Staging(ws)
    try:
        (st.upper / "sub").mkdir()
        (st.upper / "sub" / "a.txt").write_text("changed")
        fx = st.changes(("sub/a.txt",))
        os.rename(ws / "sub", tmp_path / "moved")
        os.symlink(outside, ws / "sub")
        st.apply(fx)
    finally:
        st.close()
    assert not (outside / "a.txt").exists()
    assert [c.why for c in fx.changes if c.path == "sub/a.txt"][0].startswith("could not be applied")


@pytest.mark.parametrize(("path", "held"), [
    ("conftest.py", True), ("tests/conftest.py", True), ("x.pth", True), ("a/sitecustomize.py", True),
    (".envrc", True), (".git/hooks/pre-commit", True), ("Makefile", True), ("package.json", True),
    ("pyproject.toml", True), ("setup.cfg", True), ("tox.ini", True), (".github/workflows/ci.yml", True),
    (".venv/lib/python3.11/site-packages/x.py", True), ("node_modules/a/index.js", True),
    ("pkg/__pycache__/m.pyc", True), ("report.txt", False), ("src/app.py", False), ("docs/a.md", False)])
def test_what_runs_later_is_protected(path: str, held: bool) -> None:
    assert (protected(path) is not None) is held
