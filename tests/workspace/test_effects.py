"""The effects check (workspace/effects.py): what a command changed is found, rolled back and shown."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from duckflow.workspace import effects
from duckflow.workspace.checkpoints import Checkpoints
from duckflow.workspace.effects import Watch
from duckflow.workspace.sandbox import bwrap_usable
from duckflow.workspace.shell import run_command


@pytest.fixture
def ws(tmp_path: Path, _isolated_duckflow_home: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "keep.txt").write_text("precious\n")
    (root / "src" / "app.py").write_text("print('app')\n")
    (root / "src" / "lib.py").write_text("X = 1\n")
    (root / "docs").mkdir()
    (root / "docs" / "a.md").write_text("docs\n")
    return root


def test_a_deletion_an_overwrite_and_a_chmod_are_rolled_back_and_listed(ws: Path) -> None:
    watch = Watch.start(ws)
    (ws / "keep.txt").unlink()
    (ws / "src" / "app.py").write_text("print('pwned')\n")
    (ws / "src" / "lib.py").chmod(0)
    (ws / "docs").chmod(0o500)
    (ws / "new.txt").write_text("made by the command\n")
    fx = watch.finish()
    assert fx.deleted == ["keep.txt"] and fx.overwritten == ["src/app.py"]
    assert sorted(fx.chmodded) == ["docs", "src/lib.py"] and fx.created == ["new.txt"]
    assert (ws / "keep.txt").read_text() == "precious\n"
    assert (ws / "src" / "app.py").read_text() == "print('app')\n"
    assert (ws / "src" / "lib.py").stat().st_mode & 0o777 == 0o644
    assert (ws / "docs").stat().st_mode & 0o777 == 0o755
    assert (ws / "new.txt").exists()  # what the command created stays
    assert "-print('app')" in fx.diff and "+print('pwned')" in fx.diff and "deleted: keep.txt" in fx.diff
    assert "deleted keep.txt" in fx.summary() and fx.not_restored == []


def test_the_commands_version_can_be_put_back_with_undo(ws: Path) -> None:
    watch = Watch.start(ws)
    (ws / "keep.txt").write_text("the command's\n")
    fx = watch.finish()
    assert (ws / "keep.txt").read_text() == "precious\n" and fx.saved_as is not None
    cp = Checkpoints(ws)
    try:
        cp.undo(fx.saved_as)
    finally:
        cp.close()
    assert (ws / "keep.txt").read_text() == "the command's\n"


def test_a_deleted_folder_comes_back_whole(ws: Path) -> None:
    import shutil

    watch = Watch.start(ws)
    shutil.rmtree(ws / "src")
    fx = watch.finish()
    assert set(fx.deleted) == {"src", "src/app.py", "src/lib.py"}
    assert (ws / "src" / "lib.py").read_text() == "X = 1\n"


def test_covered_paths_may_change(ws: Path) -> None:
    watch = Watch.start(ws, covered=["docs/", "keep.txt"])
    (ws / "docs" / "a.md").unlink()
    (ws / "keep.txt").write_text("allowed\n")
    fx = watch.finish()
    assert fx.changed == [] and (ws / "keep.txt").read_text() == "allowed\n"


def test_a_rewrite_that_puts_size_and_mtime_back_is_still_seen(ws: Path) -> None:
    watch = Watch.start(ws)
    st = (ws / "keep.txt").stat()
    (ws / "keep.txt").write_text("PRECIOUS\n")  # same size
    os.utime(ws / "keep.txt", ns=(st.st_atime_ns, st.st_mtime_ns))
    fx = watch.finish()
    assert fx.overwritten == ["keep.txt"] and (ws / "keep.txt").read_text() == "precious\n"


def test_only_what_changed_since_the_last_check_is_read_again(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    Watch.start(ws).finish()
    read: list[str] = []
    real = effects._read

    def counting(root: Path, rel: str) -> bytes | None:
        read.append(rel)
        return real(root, rel)

    monkeypatch.setattr(effects, "_read", counting)
    time.sleep(0.01)
    (ws / "src" / "lib.py").write_text("X = 2\n")
    Watch.start(ws).finish()
    assert read == ["src/lib.py"]


def test_cache_folders_are_not_watched(ws: Path) -> None:
    (ws / "__pycache__").mkdir()
    (ws / "__pycache__" / "a.pyc").write_bytes(b"x")
    watch = Watch.start(ws)
    (ws / "__pycache__" / "a.pyc").write_bytes(b"y")
    assert watch.finish().changed == []


@pytest.mark.skipif(not bwrap_usable(), reason="bubblewrap cannot run here")
def test_in_bubblewrap_the_kernel_refuses_changes_to_read_only_files(ws: Path) -> None:
    watch = Watch.start(ws, covered=["docs/"])
    ro = tuple(watch.readonly())
    assert "keep.txt" in ro and "docs/a.md" not in ro
    result = asyncio.run(run_command(
        ws, "rm -f keep.txt; echo x > src/app.py; chmod 000 src/lib.py; echo y > docs/a.md; echo z > new.txt",
        timeout=30, limit=4096, sandbox="bwrap", readonly=ro))
    assert result.mode == "bwrap"
    fx = watch.finish()
    assert fx.changed == [] and fx.created == ["new.txt"]
    assert (ws / "keep.txt").read_text() == "precious\n" and (ws / "docs" / "a.md").read_text() == "y\n"


def test_in_git_only_what_changes_what_git_runs_is_watched(ws: Path) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    watch = Watch.start(ws)
    subprocess.run(["git", "-C", str(ws), "add", "keep.txt"], check=True)  # index and objects
    (ws / ".git" / "config").write_text((ws / ".git" / "config").read_text() + "[alias]\n\tx = !rm k\n")
    fx = watch.finish()
    assert fx.overwritten == [".git/config"] and fx.not_restored == [".git/config"]


def test_a_folder_chmod_ed_000_is_set_back_and_its_files_are_not_called_deleted(ws: Path) -> None:
    watch = Watch.start(ws)
    (ws / "src").chmod(0)
    fx = watch.finish()
    assert fx.chmodded == ["src"] and fx.deleted == [] and fx.overwritten == []
    assert (ws / "src").stat().st_mode & 0o777 == 0o755 and (ws / "src" / "app.py").exists()


def test_the_rollback_goes_file_by_file_and_a_link_cannot_switch_it_off(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 32, class 4: a link left where a file was (or on the way to one) blocks only that
    path; the others are restored, what was not is said as such, and `duckflow undo` never
    calls Duckflow's own store forged."""
    import os

    from duckflow.channels.cli.main import main
    from duckflow.workspace.effects import Watch

    monkeypatch.setenv("DUCKFLOW_HOME", str(tmp_path / "home"))
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "secret.txt").write_text("outside\n")
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    for name in ("a.txt", "b.txt", "c.txt", "sub/d.txt"):
        (root / name).write_text(f"{name}\n")
    watch = Watch.start(root)
    (root / "a.txt").unlink()
    (root / "b.txt").write_text("overwritten\n")
    (root / "c.txt").unlink()
    os.symlink(outside / "secret.txt", root / "c.txt")  # a link where a file was
    (root / "sub" / "d.txt").unlink()
    (root / "sub").rmdir()
    os.symlink(outside / "sub", root / "sub")  # a link where a folder was
    fx = watch.finish()
    assert (root / "a.txt").read_text() == "a.txt\n" and (root / "b.txt").read_text() == "b.txt\n"
    assert not os.path.islink(root / "c.txt") and (root / "c.txt").read_text() == "c.txt\n"
    assert not os.path.islink(root / "sub") and (root / "sub").is_dir()
    assert (outside / "secret.txt").read_text() == "outside\n" and list((outside / "sub").iterdir()) == []
    assert set(fx.not_restored) <= {"sub/d.txt"}  # blocked by the link at the time: said so
    assert fx.checkpoint is not None and fx.saved_as is not None
    # `duckflow undo` puts the command's version back, file by file, and blames no store
    (root / "sub").rmdir()
    os.symlink(outside / "sub", root / "sub")
    capsys.readouterr()
    main(["undo", str(fx.saved_as), "--workspace", str(root)])
    out = capsys.readouterr()
    assert "forged" not in out.out + out.err
    assert not (root / "a.txt").exists() and (root / "b.txt").read_text() == "overwritten\n"
    assert list((outside / "sub").iterdir()) == []
