"""Every change is checkpointed first; undo restores it, also after a restart."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from duckflow.channels.cli.main import main
from duckflow.paths import duckflow_home
from duckflow.workspace.checkpoints import CheckpointError, Checkpoints
from duckflow.workspace.files import Workspace


def test_undo_across_a_new_checkpoints_instance(ws: Workspace, root: Path) -> None:
    os.chmod(root / "src" / "app.py", 0o750)
    ws.write_file("src/app.py", "changed\n")
    ws.write_file("new/deep/file.txt", "new")
    ws.checkpoints.close()

    restarted = Checkpoints(root)  # as after a restart: only the disk is shared
    listed = restarted.list()
    assert [c.tool for c in listed] == ["write_file", "write_file"]
    assert listed[0].paths == ("new",)  # the highest folder the change created
    restarted.undo()
    assert not (root / "new").exists()
    restarted.undo()
    assert (root / "src" / "app.py").read_text() == "print('hello')\n"
    assert (root / "src" / "app.py").stat().st_mode & 0o777 == 0o750
    with pytest.raises(CheckpointError, match="nothing to undo"):
        restarted.undo()


def test_undo_a_chosen_change_and_undo_the_undo(ws: Workspace, root: Path) -> None:
    first = ws.write_file("a.txt", "one")["checkpoint"]
    ws.write_file("b.txt", "two")
    result = ws.checkpoints.undo(first)
    assert result.undone_id == first and not (root / "a.txt").exists()
    assert (root / "b.txt").read_text() == "two"
    ws.checkpoints.undo(result.saved_as)  # the state before the undo comes back
    assert (root / "a.txt").read_text() == "one"


def test_undo_restores_a_deleted_tree_with_links_and_modes(ws: Workspace, root: Path) -> None:
    (root / "src" / "pkg").mkdir()
    (root / "src" / "pkg" / "run.py").write_text("run")
    os.chmod(root / "src" / "pkg" / "run.py", 0o755)
    os.symlink("run.py", root / "src" / "pkg" / "alias.py")
    ws.delete_path("src", recursive=True)
    assert not (root / "src").exists()
    ws.checkpoints.undo()
    assert (root / "src" / "app.py").read_text() == "print('hello')\n"
    assert (root / "src" / "pkg" / "run.py").stat().st_mode & 0o777 == 0o755
    assert os.readlink(root / "src" / "pkg" / "alias.py") == "run.py"


def test_undo_of_a_move_puts_both_sides_back(ws: Workspace, root: Path) -> None:
    ws.move_path("src", "lib")
    ws.checkpoints.undo()
    assert (root / "src" / "app.py").exists() and not (root / "lib").exists()


def test_undo_of_edit_and_create_directory(ws: Workspace, root: Path) -> None:
    ws.create_directory("a/b")
    ws.edit_file("src/app.py", "<<<<<<< SEARCH\nprint('hello')\n=======\nprint('x')\n>>>>>>> REPLACE\n")
    ws.checkpoints.undo()
    assert (root / "src" / "app.py").read_text() == "print('hello')\n"
    ws.checkpoints.undo()
    assert not (root / "a").exists()


def test_undo_command_lists_and_restores(ws: Workspace, root: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    ws.write_file("src/app.py", "changed\n")
    assert main(["undo", "--list", "--workspace", str(root)]) == 0
    assert "write_file src/app.py" in capsys.readouterr().out
    assert main(["undo", "--workspace", str(root)]) == 0
    said = capsys.readouterr().out
    assert "Undone: restored src/app.py as it was." in said and "(change #1)" in said
    assert (root / "src" / "app.py").read_text() == "print('hello')\n"
    assert main(["undo", "99", "--workspace", str(root)]) == 1
    assert "no checkpoint #99" in capsys.readouterr().err


def test_undo_command_in_a_folder_without_checkpoints(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["undo", "--workspace", str(tmp_path)]) == 1
    assert "no checkpoints" in capsys.readouterr().err


def test_state_links_shipped_in_a_repository_are_refused(root: Path, outside: Path) -> None:
    (root / ".duckflow").mkdir()
    os.symlink(outside, root / ".duckflow" / "checkpoints")
    ws = Workspace.open(root)
    ws.write_file("a.txt", "x")  # checkpoints go to DUCKFLOW_HOME, never through the link
    assert ws.checkpoints.dir.is_relative_to(duckflow_home())
    from duckflow.workspace.search import CodeIndex

    os.symlink(outside / "db", root / ".duckflow" / "search.db")
    CodeIndex(root).close()  # the index lives in DUCKFLOW_HOME: the shipped link is never opened
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


def test_prune_keeps_the_newest_and_their_contents(ws: Workspace, root: Path) -> None:
    for i in range(5):
        ws.write_file("p.txt", f"version {i}")
    cps = ws.checkpoints
    assert cps.prune(keep=2) == 3
    assert len(cps.list()) == 2
    assert len(list(cps.blobs.iterdir())) == 2  # versions 2 and 3 (the states before 3 and 4)
    cps.undo()
    assert (root / "p.txt").read_text() == "version 3"


def test_a_change_too_large_to_checkpoint_is_not_made(root: Path) -> None:
    from duckflow.config import WorkspaceConfig

    ws = Workspace.open(root, WorkspaceConfig(checkpoint_max_bytes=10))
    (root / "big.txt").write_text("x" * 100)
    with pytest.raises(CheckpointError, match="checkpoint"):
        ws.delete_path("big.txt")
    assert (root / "big.txt").exists()


def test_a_damaged_blob_is_not_restored(ws: Workspace, root: Path) -> None:
    ws.write_file("src/app.py", "changed\n")
    blob = next(ws.checkpoints.blobs.iterdir())
    blob.write_bytes(b"tampered")
    with pytest.raises(CheckpointError, match="damaged"):
        ws.checkpoints.undo()
    assert (root / "src" / "app.py").read_text() == "changed\n"  # nothing was touched
    assert [c.tool for c in ws.checkpoints.list()] == ["write_file"]
