"""Shared workspace fixtures: a workspace with traps around it and a secret outside."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from duckflow.config import WorkspaceConfig
from duckflow.workspace.files import Workspace

SECRET = "TOP-SECRET-OUTSIDE"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder next to the workspace holding a secret file that must never be read or changed."""
    d = tmp_path / "outside"
    d.mkdir()
    (d / "secret.txt").write_text(SECRET)
    return d


@pytest.fixture
def root(tmp_path: Path, outside: Path) -> Path:
    """A workspace with inside/outside symlinks, a .git folder and a FIFO."""
    r = tmp_path / "ws"
    (r / "src").mkdir(parents=True)
    (r / "src" / "app.py").write_text("print('hello')\n")
    (r / ".git").mkdir()
    (r / ".git" / "config").write_text("[core]\n")
    os.symlink(outside, r / "escape")  # absolute link out
    os.symlink("../outside/secret.txt", r / "rel_escape")  # relative link out
    os.symlink("src", r / "inside_link")  # link that stays inside
    os.symlink("chain2", r / "chain1")
    os.symlink("escape", r / "chain2")  # chain ending outside
    os.symlink("loop_b", r / "loop_a")
    os.symlink("loop_a", r / "loop_b")
    os.mkfifo(r / "pipe")
    return r


@pytest.fixture
def ws(root: Path) -> Workspace:
    return Workspace.open(root, WorkspaceConfig(sandbox="none"))


def outside_untouched(outside: Path) -> bool:
    names = sorted(p.name for p in outside.iterdir())
    return names == ["secret.txt"] and (outside / "secret.txt").read_text() == SECRET
