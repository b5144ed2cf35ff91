"""Undo is a stack a person can trust: undo → redo → undo in any order, across restarts and from
`duckflow undo` and the chat's /undo and /redo, with the right words for created, changed and
deleted files."""

from __future__ import annotations

from pathlib import Path

import pytest

from duckflow.channels.cli.main import main
from duckflow.channels.commands import Changes
from duckflow.workspace.checkpoints import CheckpointError, Checkpoints
from duckflow.workspace.files import Workspace
from duckflow.workspace.undowords import undo_words
from tests.helpers.workspace import outside, root, ws  # noqa: F401

APP = "print('hello')\n"


def test_undo_redo_undo_in_any_order(ws: Workspace, root: Path) -> None:  # noqa: F811
    ws.write_file("src/app.py", "changed\n")
    ws.write_file("hello.py", "print('hi')\n")
    cps = ws.checkpoints
    first = cps.undo()
    assert not (root / "hello.py").exists() and first.effects == (("hello.py", "removed"),)
    assert undo_words(first) == "Undone: removed hello.py (the file it created)."
    again = cps.redo()
    assert (root / "hello.py").read_text() == "print('hi')\n"
    assert undo_words(again) == "Redone: created hello.py again."
    cps.undo()  # the change is on disk again: it can be undone again
    assert not (root / "hello.py").exists()
    cps.undo()  # and the one before it
    assert (root / "src" / "app.py").read_text() == APP
    assert undo_words(cps.redo()) == "Redone: changed src/app.py again."
    assert (root / "src" / "app.py").read_text() == "changed\n" and not (root / "hello.py").exists()
    cps.redo()
    assert (root / "hello.py").exists()
    with pytest.raises(CheckpointError, match="nothing to redo"):
        cps.redo()
    cps.undo()
    cps.undo()
    with pytest.raises(CheckpointError, match="nothing to undo"):
        cps.undo()
    restarted = Checkpoints(root)  # the stack is on disk: a restart keeps it
    try:
        restarted.redo()
        assert (root / "src" / "app.py").read_text() == "changed\n"
    finally:
        restarted.close()


def test_a_new_change_after_an_undo_ends_the_redo(ws: Workspace, root: Path) -> None:  # noqa: F811
    ws.write_file("a.txt", "one")
    ws.checkpoints.undo()
    ws.write_file("b.txt", "two")
    with pytest.raises(CheckpointError, match="nothing to redo"):
        ws.checkpoints.redo()
    assert not (root / "a.txt").exists()


def test_the_words_for_a_deleted_file(ws: Workspace, root: Path) -> None:  # noqa: F811
    ws.delete_path("src/app.py")
    undone = ws.checkpoints.undo()
    assert (root / "src" / "app.py").read_text() == APP
    assert undo_words(undone) == "Undone: brought back src/app.py (it had been deleted)."
    assert undo_words(ws.checkpoints.redo()) == "Redone: deleted src/app.py again."
    assert not (root / "src" / "app.py").exists()


def test_chat_undo_redo_undo(ws: Workspace, root: Path) -> None:  # noqa: F811
    ws.write_file("hello.py", "print('hi')\n")
    changes = Changes(root)
    assert changes.undo().startswith("Undone: removed hello.py (the file it created).")
    assert changes.redo().startswith("Redone: created hello.py again.")
    assert changes.undo().startswith("Undone: removed hello.py")
    assert not (root / "hello.py").exists()
    assert Changes(root).redo().startswith("Redone:")  # another conversation, the same stack
    assert (root / "hello.py").exists()


def test_duckflow_undo_redo_undo(ws: Workspace, root: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    ws.write_file("src/app.py", "changed\n")
    ws.checkpoints.close()
    assert main(["undo", "-w", str(root)]) == 0
    assert "Undone: restored src/app.py as it was." in capsys.readouterr().out
    assert main(["undo", "--redo", "-w", str(root)]) == 0
    assert "Redone: changed src/app.py again." in capsys.readouterr().out
    assert (root / "src" / "app.py").read_text() == "changed\n"
    assert main(["undo", "-w", str(root)]) == 0
    assert (root / "src" / "app.py").read_text() == APP
    assert main(["undo", "-w", str(root)]) == 1
    assert "nothing to undo" in capsys.readouterr().err
