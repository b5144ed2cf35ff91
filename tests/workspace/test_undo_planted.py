"""Undo never acts on data Duckflow did not write, and never outside the workspace (issue 8).

A cloned repository can ship `.duckflow/checkpoints/index.db`; an approved command could
write one. Both the planted store and a forged row in Duckflow's own store are driven
through the real `duckflow undo` command, with a victim folder next to the workspace.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from duckflow.channels.cli.main import main
from duckflow.workspace.checkpoints import Checkpoints, store_dir
from duckflow.workspace.files import Workspace

KEYS = "ssh-ed25519 AAAA-the-victims-own-key\n"
EVIL = b"ssh-ed25519 AAAA-attacker-key\n"

_SCHEMA = """
CREATE TABLE checkpoints (id INTEGER PRIMARY KEY AUTOINCREMENT, created REAL NOT NULL,
  tool TEXT NOT NULL, summary TEXT NOT NULL DEFAULT '', undone INTEGER NOT NULL DEFAULT 0);
CREATE TABLE entries (checkpoint_id INTEGER NOT NULL, seq INTEGER NOT NULL, top TEXT NOT NULL,
  path TEXT NOT NULL, existed INTEGER NOT NULL, kind TEXT NOT NULL DEFAULT '',
  mode INTEGER NOT NULL DEFAULT 0, blob TEXT, link TEXT);
"""


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    v = tmp_path / "victim"
    v.mkdir()
    (v / "authorized_keys").write_text(KEYS)
    (tmp_path / "victim_dir").mkdir()
    (tmp_path / "victim_dir" / "precious.txt").write_text("keep me")
    return v


def _untouched(tmp_path: Path) -> bool:
    return ((tmp_path / "victim" / "authorized_keys").read_text() == KEYS
            and (tmp_path / "victim_dir" / "precious.txt").read_text() == "keep me")


def _plant(db: Path, blobs: Path, rows: list[tuple[str, str, int, str, str | None]]) -> None:
    """An index shaped like Duckflow's, with (top, path, existed, kind, blob) rows."""
    blobs.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(EVIL).hexdigest()
    (blobs / digest).write_bytes(EVIL)
    con = sqlite3.connect(db)
    if not _has_tables(con):
        con.executescript(_SCHEMA)
    with con:
        cur = con.execute("INSERT INTO checkpoints(created, tool, summary) VALUES (1, 'write_file', 'x')")
        cid = cur.lastrowid
        for seq, (top, path, existed, kind, blob) in enumerate(rows):
            con.execute("INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?, 420, ?, NULL)",
                        (cid, seq, top, path, existed, kind, digest if blob == "evil" else blob))
    con.close()


def _has_tables(con: sqlite3.Connection) -> bool:
    return con.execute("SELECT 1 FROM sqlite_master WHERE name = 'entries'").fetchone() is not None


PLANTED_ROWS = [("../victim/authorized_keys", "../victim/authorized_keys", 1, "file", "evil"),
                ("../victim_dir", "../victim_dir", 0, "", None)]


def test_a_checkpoint_store_shipped_in_the_workspace_is_refused_by_the_real_cli(
        tmp_path: Path, victim: Path) -> None:
    ws = tmp_path / "ws"
    cps = ws / ".duckflow" / "checkpoints"
    cps.mkdir(parents=True)
    _plant(cps / "index.db", cps / "blobs", PLANTED_ROWS)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    for argv in (["undo", "-w", str(ws)], ["undo", "1", "--workspace", str(ws)]):
        proc = subprocess.run([sys.executable, "-m", "duckflow", *argv], capture_output=True,
                              text=True, env=env, timeout=60, cwd=tmp_path)
        assert proc.returncode == 1, proc.stderr
        first = proc.stderr.splitlines()[0]
        assert "refused" in first and "Duckflow did not write it" in first
        assert "Traceback" not in proc.stderr
        assert _untouched(tmp_path)
    assert main(["undo", "--list", "--workspace", str(ws)]) == 1  # not listed as ours either


def test_a_planted_store_next_to_real_checkpoints_is_ignored(
        tmp_path: Path, victim: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    Workspace.open(root).write_file("a.txt", "mine")
    cps = root / ".duckflow" / "checkpoints"
    cps.mkdir(parents=True)
    _plant(cps / "index.db", cps / "blobs", PLANTED_ROWS)
    assert main(["undo", "--workspace", str(root)]) == 0
    out = capsys.readouterr()
    assert "Undone: removed a.txt (the file it created)." in out.out and "ignored" in out.err
    assert not (root / "a.txt").exists() and _untouched(tmp_path)


@pytest.mark.parametrize(("rows", "why"), [
    (PLANTED_ROWS[:1], "'..'"),
    (PLANTED_ROWS[1:], "'..'"),
    ([("/etc/cron.d/x", "/etc/cron.d/x", 1, "file", "evil")], "absolute"),
    ([("a.txt", "../victim/authorized_keys", 1, "file", "evil")], "'..'"),
    ([("a.txt", "b.txt", 1, "file", "evil")], "not inside"),
    ([(".git/hooks/pre-commit", ".git/hooks/pre-commit", 1, "file", "evil")], ".git"),
    ([("out/authorized_keys", "out/authorized_keys", 1, "file", "evil")], "symlink"),
    ([("d", "d", 1, "dir", None), ("d", "d/l", 1, "link", None),
      ("d", "d/l/authorized_keys", 1, "file", "evil")], "symlink"),
    ([("a.txt", "a.txt", 1, "file", "../../victim/authorized_keys")], "content hash"),
])
def test_a_forged_entry_in_duckflows_own_store_changes_nothing(
        tmp_path: Path, victim: Path, capsys: pytest.CaptureFixture[str],
        rows: list[tuple[str, str, int, str, str | None]], why: str) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    os.symlink(str(victim), root / "out")  # a link inside the workspace that leads out
    Checkpoints(root).close()  # Duckflow's own (empty) store for this workspace
    d = store_dir(root)
    _plant(d / "index.db", d / "blobs", rows)
    if any(r[3] == "link" for r in rows):
        with sqlite3.connect(d / "index.db") as con:
            con.execute("UPDATE entries SET link = ? WHERE kind = 'link'", (str(victim),))
    before = sorted(p.name for p in root.iterdir())
    assert main(["undo", "--workspace", str(root)]) == 1
    err = capsys.readouterr().err
    assert "refused to undo #1" in err and why in err.splitlines()[0]
    assert _untouched(tmp_path)
    assert sorted(p.name for p in root.iterdir()) == before
    assert sorted(p.name for p in victim.iterdir()) == ["authorized_keys"]


def test_restored_modes_never_carry_setuid(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "tool").write_text("x")
    ws = Workspace.open(root)
    ws.write_file("tool", "y")
    with sqlite3.connect(store_dir(root) / "index.db") as con:
        con.execute("UPDATE entries SET mode = ? WHERE path = 'tool'", (0o4755,))
    ws.checkpoints.undo()
    assert (root / "tool").read_text() == "x"
    assert (root / "tool").stat().st_mode & 0o7777 == 0o755


def test_the_store_lives_in_duckflow_home_and_belongs_to_one_root(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    Workspace.open(a).write_file("x.txt", "1")
    assert not (a / ".duckflow").exists()
    assert store_dir(a) != store_dir(b)
    os.symlink(a, tmp_path / "a_link")
    assert store_dir(tmp_path / "a_link") == store_dir(a)  # keyed by the resolved root
    with sqlite3.connect(store_dir(a) / "index.db") as con:
        con.execute("UPDATE meta SET value = '/elsewhere' WHERE key = 'root'")
    from duckflow.workspace.checkpoints import CheckpointError

    with pytest.raises(CheckpointError, match="belongs to another workspace"):
        Checkpoints(a)
