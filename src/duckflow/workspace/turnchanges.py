"""What one turn changed in the workspace, read from the checkpoints: a cancelled turn's true account.

`TurnChanges(root)` marks the checkpoint store when a turn starts (the newest checkpoint id;
nothing is created when the workspace has none yet). `files()` then lists the paths Duckflow's
own file tools changed since the mark and are still changed (checkpoints not undone; the
undo store's own saves and the effects check's restores are not changes of the turn), and
`undos` how many `/undo` take them back (one per checkpoint). `saw(tool)` notes a command the
turn ran: what a command did is not in the checkpoints, so the account says it ran.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from duckflow.toolkinds import RUN_TOOLS

NOT_CHANGES = ("undo", "effects-check")  # saves the undo store makes for itself, not a tool's change
_LOCK = threading.Lock()


_READERS: dict[tuple[str, int], Any] = {}  # (store, inode) → a read-only connection, kept: opening one costs ~1 ms


def _newest(root: str | Path) -> int:
    """The newest checkpoint's id (0: none), read-only and cheap: a server takes it at every turn's start."""
    import sqlite3

    from duckflow.workspace.checkpoints import store_dir

    db = store_dir(root) / "index.db"
    try:
        key = (str(db), db.stat().st_ino)
    except OSError:
        return 0
    with _LOCK:
        conn = _READERS.get(key)
        if conn is None:
            while len(_READERS) >= 8:
                _READERS.pop(next(iter(_READERS))).close()
            conn = _READERS[key] = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True, check_same_thread=False)
        row = conn.execute("SELECT MAX(id) FROM checkpoints").fetchone()
    return int(row[0] or 0)


@dataclass
class Changed:
    """The paths a turn changed (and still are), and how many `/undo` take them back."""

    paths: tuple[str, ...] = ()
    undos: int = 0
    commands: tuple[str, ...] = ()  # commands the turn ran (their effects are not counted above)


@dataclass
class TurnChanges:
    root: str
    mark: int = -1
    commands: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.mark < 0:
            try:
                self.mark = _newest(self.root)
            except Exception:  # an unreadable store: count from nothing rather than fail the turn
                self.mark = 0

    def saw(self, tool: str, command: str = "") -> None:
        """A tool call of the turn: a command (execute_shell, run_tests) is noted."""
        if tool in RUN_TOOLS:
            self.commands.append(command or tool)

    def files(self) -> Changed:
        from duckflow.workspace.checkpoints import Checkpoints, has_checkpoints

        if not has_checkpoints(self.root):
            return Changed(commands=tuple(self.commands))
        cps = Checkpoints(self.root)
        try:
            rows = cps._db.execute(
                "SELECT id FROM checkpoints WHERE id > ? AND undone = 0 AND tool NOT IN (?, ?) ORDER BY id",
                (self.mark, *NOT_CHANGES)).fetchall()
            ids = [int(r["id"]) for r in rows]
            paths: list[str] = []
            for cid in ids:
                for p in cps.get(cid).paths:
                    if p not in paths:
                        paths.append(p)
        finally:
            cps.close()
        return Changed(tuple(paths), len(ids), tuple(self.commands))
