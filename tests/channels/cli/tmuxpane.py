"""`duckflow` in a real terminal for the tmux tests: a pane started, keys sent, text waited for, the screen captured, killed.

`pane(tmp_path, name, "chat -w … --model scripted:demo")` runs `python -m duckflow ARGS; echo EXIT=$?`
in a detached tmux session of its own (its own server socket, so tests never share one) with a
fresh DUCKFLOW_HOME and no config file, and kills it when the block ends. Every screen `grab`bed
is saved under the pane's folder (`DUCKFLOW_TEST_ARTIFACTS/NAME` when set, else under tmp_path)
so a person can look at what the test saw. `duckflow(tmp_path, …)` runs the command outside the
pane with the same home and config. Modules using it mark themselves `needs_tmux`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[3] / "src"
needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class Screen:
    """One tmux pane: what it shows, what it kept, the keys sent to it."""

    def __init__(self, name: str, folder: Path) -> None:
        self.name = name
        self.folder = folder
        self.captures: list[str] = []

    def tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """A tmux command on this pane's own server."""
        return subprocess.run(["tmux", "-L", self.name, *args], capture_output=True, text=True, check=check)

    def grab(self) -> str:
        """The screen as it is now (a new one is kept in `captures` and saved)."""
        text = self.tmux("capture-pane", "-p", "-t", self.name, check=False).stdout
        if not self.captures or self.captures[-1] != text:
            self.captures.append(text)
            (self.folder / f"screen-{len(self.captures):04d}.txt").write_text(text)
        return text

    def history(self) -> str:
        """The scrollback and the screen, wrapped lines joined."""
        return self.tmux("capture-pane", "-p", "-J", "-S", "-2000", "-t", self.name, check=False).stdout

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", self.name, *keys)

    def type(self, text: str) -> None:
        self.keys("-l", text)
        self.keys("Enter")

    def paste(self, text: str) -> None:
        """`text` pasted as a terminal pastes it (bracketed)."""
        self.tmux("set-buffer", "-b", "p", text)
        self.tmux("paste-buffer", "-p", "-b", "p", "-t", self.name)

    def count(self, text: str) -> int:
        return self.history().count(text)

    def wait_for(self, text: str, timeout: float = 60.0, *, more_than: int = 0) -> str:
        """Wait until `text` shows more than `more_than` times in the scrollback."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self.grab()
            hist = self.history()
            if hist.count(text) > more_than:
                return hist
            time.sleep(0.03)
        raise AssertionError(f"'{text}' did not appear; last screen:\n{self.grab()}")

    def wait_gone(self, text: str, where: Callable[[], str] | None = None, timeout: float = 10.0) -> bool:
        """Wait until `text` no longer shows (on the screen, or in what `where` reads); False if it stays."""
        end = time.monotonic() + timeout
        while text in (where or self.grab)():
            if time.monotonic() >= end:
                return False
            time.sleep(0.05)
        return True

    def idle(self, timeout: float = 60.0) -> None:
        """Wait until the chat rests (its bottom bar says so, not what runs)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            bar = [ln for ln in self.grab().splitlines() if ln.strip()][-1:]
            if bar and ("/help · /undo" in bar[0] or "approval waiting" in bar[0]):
                return
            time.sleep(0.05)
        raise AssertionError(f"the chat did not come to rest; last screen:\n{self.grab()}")

    def kill(self) -> None:
        self.tmux("kill-server", check=False)


def _env(tmp_path: Path, extra: dict[str, str] | None) -> dict[str, str]:
    return {"DUCKFLOW_HOME": str(tmp_path / "home"), "DUCKFLOW_CONFIG": os.devnull, "PYTHONPATH": str(SRC),
            **(extra or {})}


@contextmanager
def pane(tmp_path: Path, name: str, args: str, *, env: dict[str, str] | None = None,
         size: tuple[int, int] = (110, 50)) -> Iterator[Screen]:
    """`duckflow ARGS` in a WIDTHxHEIGHT pane; `env` adds to (or overrides) the home, config and PYTHONPATH."""
    artifacts = Path(os.environ.get("DUCKFLOW_TEST_ARTIFACTS") or tmp_path) / name
    artifacts.mkdir(parents=True, exist_ok=True)
    print(f"screen captures: {artifacts}")
    assigned = " ".join(f"{k}={v}" for k, v in _env(tmp_path, env).items())
    session = f"duckflow-test-{uuid.uuid4().hex[:8]}"
    cmd = f"env {assigned} {sys.executable} -m duckflow {args}; echo EXIT=$?; sleep 60"
    subprocess.run(["tmux", "-L", session, "new-session", "-d", "-s", session, "-x", str(size[0]), "-y", str(size[1]),
                    cmd], check=True)
    screen = Screen(session, artifacts)
    try:
        yield screen
    finally:
        screen.kill()


def duckflow(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`duckflow ARGS` outside a pane, with the pane's home and config (to read what a pane's run left)."""
    return subprocess.run([sys.executable, "-m", "duckflow", *args], env={**os.environ, **_env(tmp_path, None)},
                          capture_output=True, text=True, timeout=60)
