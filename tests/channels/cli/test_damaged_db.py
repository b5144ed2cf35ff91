"""A state database with a valid header but damaged pages is named with the next step."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest


def cli(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """The real command in its own process, as a person runs it."""
    env = dict(os.environ)
    env.pop("DUCKFLOW_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "duckflow", *argv], capture_output=True,
                          text=True, timeout=60, env=env)


def _damage_pages(db: Path) -> None:
    """Keep the file header and the schema (page 1); overwrite the first half of every other
    page, the way a torn write or a bad disk sector leaves a file. The page's own header goes
    too: with only its cell pointers hit, SQLite may read garbage as rows instead of failing."""
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page_size = con.execute("PRAGMA page_size").fetchone()[0]
    con.close()
    size = db.stat().st_size
    assert size >= 2 * page_size, "the database needs a page past the schema"
    with open(db, "r+b") as fh:
        for start in range(page_size, size, page_size):
            fh.seek(start)
            fh.write(b"\xff" * (page_size // 2))
    con = sqlite3.connect(db)
    try:  # really damaged: the check reports it, or cannot even read the pages
        assert con.execute("PRAGMA quick_check").fetchone()[0] != "ok"
    except sqlite3.DatabaseError as exc:
        assert "malformed" in str(exc)
    finally:
        con.close()


def _one_line_naming(err: str, db: Path) -> None:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 2 and lines[1].lstrip().startswith("next:"), err
    assert str(db) in lines[0] and "damaged" in lines[0], err
    assert f"mv {db} {db}.damaged" in lines[1], err
    assert "internal error" not in err and "Traceback" not in err


@pytest.fixture
def state(tmp_path: Path) -> tuple[Path, Path]:
    ws = tmp_path / "ws"
    ws.mkdir()
    # a real run (its own process: every connection closed) that leaves a session and a job
    # waiting for approval, so both databases hold rows
    proc = cli(["run", "Create hello.py", "-w", str(ws), "--model", "scripted:demo", "--json"])
    assert proc.returncode == 4, proc.stderr
    return Path(os.environ["DUCKFLOW_HOME"]), ws


def test_a_damaged_sessions_db_is_named_by_status_and_run(
        state: tuple[Path, Path]) -> None:
    home, ws = state
    db = home / "sessions.db"
    _damage_pages(db)
    for argv in (["status", "-w", str(ws)],
                 ["run", "Create hello.py", "-w", str(ws), "--model", "scripted:demo"]):
        proc = cli(argv)
        assert proc.returncode == 1, (argv, proc.stderr)
        _one_line_naming(proc.stderr, db)


def test_a_damaged_gate_db_is_named(state: tuple[Path, Path]) -> None:
    home, _ = state
    db = home / "gate.db"
    _damage_pages(db)
    proc = cli(["approvals", "list"])
    assert proc.returncode == 1, proc.stderr
    _one_line_naming(proc.stderr, db)


def test_moving_it_aside_as_told_lets_duckflow_start_a_new_one(
        state: tuple[Path, Path]) -> None:
    home, ws = state
    db = home / "sessions.db"
    _damage_pages(db)
    assert cli(["status", "-w", str(ws)]).returncode == 1
    db.rename(db.with_name("sessions.db.damaged"))
    proc = cli(["status", "-w", str(ws)])
    assert proc.returncode == 1 and "no session yet" in proc.stderr  # a fresh sessions.db
    proc = cli(["run", "Create hello.py", "-w", str(ws), "--model", "scripted:demo", "--json"])
    assert proc.returncode == 4, proc.stderr  # works again: waits for approval as before
