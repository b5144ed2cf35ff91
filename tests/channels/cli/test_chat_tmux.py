"""`duckflow chat` in a real terminal (tmux): type a task, watch the reply stream in, approve, quit.

The screen is captured every few milliseconds; the captures are saved (path printed) so a
person can look at what the test saw. Skipped when tmux is not installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
PARTIAL = "I'll plan this: look at the workspace"  # the demo's first reply, word by word
FULL = "I'll plan this: look at the workspace, then write hello.py."


class Screen:
    def __init__(self, name: str, folder: Path) -> None:
        self.name = name
        self.folder = folder
        self.captures: list[str] = []

    def grab(self) -> str:
        text = subprocess.run(["tmux", "capture-pane", "-p", "-t", self.name], capture_output=True,
                              text=True, check=False).stdout
        if not self.captures or self.captures[-1] != text:
            self.captures.append(text)
            (self.folder / f"screen-{len(self.captures):04d}.txt").write_text(text)
        return text

    def history(self) -> str:
        return subprocess.run(["tmux", "capture-pane", "-p", "-S", "-400", "-t", self.name],
                              capture_output=True, text=True, check=False).stdout

    def keys(self, *keys: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=True)

    def wait_for(self, text: str, timeout: float = 30.0) -> str:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if text in self.grab() or text in self.history():
                return self.history()
            time.sleep(0.02)
        raise AssertionError(f"'{text}' did not appear; last screen:\n{self.grab()}")


def test_chat_in_a_terminal_streams_the_reply_then_approves_and_quits(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    artifacts = Path(os.environ.get("DUCKFLOW_TEST_ARTIFACTS") or tmp_path) / "chat-tmux"
    artifacts.mkdir(parents=True, exist_ok=True)
    print(f"screen captures: {artifacts}")
    name = f"duckflow-test-{uuid.uuid4().hex[:8]}"
    src = Path(__file__).resolve().parents[3] / "src"
    env = (f"DUCKFLOW_HOME={tmp_path / 'home'} DUCKFLOW_CONFIG=/dev/null "
           f"DUCKFLOW_DEMO_DELAY=0.06 PYTHONPATH={src}")
    cmd = f"env {env} {sys.executable} -m duckflow chat -w {ws} --model scripted:demo --new; sleep 30"
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "120", "-y", "45", cmd], check=True)
    screen = Screen(name, artifacts)
    try:
        screen.wait_for("you ›")
        screen.keys("create hello.py", "Enter")
        screen.wait_for("approval needed", timeout=60)
        # the reply arrived word by word: several screens showed it partly written
        partial = [c for c in screen.captures if PARTIAL[:12] in c and FULL not in c]
        assert len(partial) >= 2, f"streamed text seen in {len(partial)} screen update(s)"
        growing = {c[c.index(PARTIAL[:12]):].split("\n")[0] for c in partial}
        assert len(growing) >= 2, "the partly written line grew between screen updates"
        screen.wait_for("answer: yes / no")
        screen.keys("yes", "Enter")
        screen.wait_for("Done: hello.py prints a friendly greeting", timeout=60)
        screen.keys("/quit", "Enter")
        end = time.monotonic() + 10
        while time.monotonic() < end and "you ›" in screen.grab().splitlines()[-1:]:
            time.sleep(0.05)
        assert (ws / "hello.py").exists()
        (artifacts / "final-history.txt").write_text(screen.history())
        assert "Traceback" not in screen.history()
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], check=False, capture_output=True)
