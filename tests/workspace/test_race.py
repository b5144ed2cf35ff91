"""Real races: a folder swapped for a symlink while the tools work; a writer killed mid-write."""

from __future__ import annotations

import ctypes
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from duckflow.config import WorkspaceConfig
from duckflow.errors import DuckflowError
from duckflow.workspace.files import Workspace
from duckflow.workspace.guard import WorkspaceGuard
from tests.helpers.workspace import SECRET, outside_untouched

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_libc = ctypes.CDLL(None, use_errno=True)


def _exchange(a: Path, b: Path) -> None:
    """Swap two names atomically (renameat2 RENAME_EXCHANGE): `a` never goes missing."""
    rc = _libc.renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def test_symlink_swap_race_never_touches_the_outside(root: Path, outside: Path) -> None:
    ws = Workspace.open(root)
    victim = root / "d"
    victim.mkdir()
    (victim / "f.txt").write_text("inside")
    stop = threading.Event()
    swaps = 0

    os.symlink(outside, root / "d_link")

    def swapper() -> None:
        nonlocal swaps
        while not stop.is_set() and swaps < 1_000_000:
            _exchange(victim, root / "d_link")  # `d` is a folder, then a link out, then ...
            swaps += 1

    thread = threading.Thread(target=swapper)
    thread.start()
    outcomes = {"ok": 0, "refused": 0}
    leaked = []
    try:
        deadline = time.monotonic() + 3.0
        i = 0
        while time.monotonic() < deadline and i < 3000:
            i += 1
            try:
                ws.write_file("d/f.txt", f"write {i}")
                text = ws.read_file("d/f.txt")
                if SECRET in text:
                    leaked.append(text)
                ws.write_file(f"d/new{i % 5}.txt", "x")
                outcomes["ok"] += 1
            except (DuckflowError, OSError):
                outcomes["refused"] += 1
            verdict = WorkspaceGuard(root).check("d/secret.txt", "read")
            if verdict.allowed and verdict.resolved is not None:
                assert str(verdict.resolved).startswith(str(root))
    finally:
        stop.set()
        thread.join(10)
    assert not leaked
    assert outside_untouched(outside)
    assert swaps > 10 and outcomes["refused"] > 0  # the race was really hit


_WRITER = """
import sys
from duckflow.config import WorkspaceConfig
from duckflow.errors import DuckflowError
from duckflow.workspace.files import Workspace
ws = Workspace.open(sys.argv[1], WorkspaceConfig(max_write_bytes=8_000_000))
a, b = "A" * 3_000_000, "B" * 3_000_000
print("ready", flush=True)
i = 0
while True:
    ws.write_file("big.txt", a if i % 2 == 0 else b)
    i += 1
"""


def test_a_writer_killed_at_random_points_leaves_old_or_new_never_a_mix(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "big.txt").write_text("A" * 3_000_000)
    rng = random.Random(1234)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    for _ in range(8):
        proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(root)],
                                stdout=subprocess.PIPE, env=env)
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == b"ready"
        time.sleep(rng.uniform(0.0, 0.4))
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        data = (root / "big.txt").read_bytes()
        assert len(data) == 3_000_000
        assert data in (b"A" * 3_000_000, b"B" * 3_000_000), "a torn write"
    # Stray temp files are never listed and never mistaken for the file.
    listed = Workspace.open(root).list_files(".")["entries"]
    assert "big.txt" in listed and not any(e.startswith(".duckflow-tmp") for e in listed)


def test_write_keeps_the_mode_and_creates_parents(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    ws = Workspace.open(root, WorkspaceConfig())
    (root / "tool.py").write_text("old")
    os.chmod(root / "tool.py", 0o751)
    ws.write_file("tool.py", "new")
    assert (root / "tool.py").stat().st_mode & 0o777 == 0o751
    ws.write_file("a/b/c.txt", "deep")
    assert (root / "a" / "b" / "c.txt").read_text() == "deep"
