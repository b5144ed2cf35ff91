"""Screenshots of the CLI for docs/img/: drive `duckflow chat` / `run` in tmux, render the screen to HTML, shoot it with Chromium.

    PYTHONPATH=src python scripts/cli_screenshots.py docs/img

Uses the scripted demo model (no model needed), a fresh DUCKFLOW_HOME and workspace in a
temporary folder, `tmux capture-pane -e -p` for the screen with its colours, rich to turn the
ANSI text into HTML, and `chromium --headless --screenshot` for the PNG.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=False).stdout


class Term:
    def __init__(self, tmp: Path, args: str, width: int = 100, height: int = 36) -> None:
        self.name = f"shot-{uuid.uuid4().hex[:6]}"
        env = (f"DUCKFLOW_HOME={tmp / 'home'} DUCKFLOW_CONFIG=/dev/null DUCKFLOW_DEMO_DELAY=0.01 "
               f"PYTHONPATH={SRC} TERM=xterm-256color")
        cmd = f"cd {tmp} && env {env} {sys.executable} -m duckflow {args}; sleep 120"
        subprocess.run(["tmux", "new-session", "-d", "-s", self.name, "-x", str(width), "-y", str(height), cmd],
                       check=True)

    def wait(self, text: str, timeout: float = 60) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if text in _tmux("capture-pane", "-p", "-J", "-S", "-500", "-t", self.name):
                time.sleep(0.4)
                return
            time.sleep(0.05)
        raise SystemExit(f"'{text}' did not appear:\n{_tmux('capture-pane', '-p', '-t', self.name)}")

    def type(self, text: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, "-l", text], check=True)
        subprocess.run(["tmux", "send-keys", "-t", self.name, "Enter"], check=True)

    def shoot(self, out: Path, height: int = 600) -> None:
        from rich.console import Console
        from rich.text import Text

        ansi = _tmux("capture-pane", "-e", "-p", "-t", self.name)
        console = Console(record=True, width=100, file=open("/dev/null", "w"), force_terminal=True,
                          color_system="truecolor")
        console.print(Text.from_ansi(ansi.rstrip("\n")))
        html = out.with_suffix(".html")
        from rich.terminal_theme import MONOKAI

        page = console.export_html(inline_styles=True, theme=MONOKAI,
                                   code_format='<pre style="font-family:monospace;font-size:12.5px;line-height:1.3">'
                                               '<code>{code}</code></pre>')
        html.write_text(f'<html><body style="background:#272822;color:#f8f8f2;margin:10px">{page}</body></html>')
        subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--screenshot={out}", f"--window-size=900,{height}", f"file://{html}"],
                       capture_output=True, check=True, timeout=120)
        html.unlink()

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], check=False, capture_output=True)


def main(folder: str) -> None:
    out = Path(folder).resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "ws").mkdir()
        chat = Term(tmp, "chat -w ws --model scripted:demo --new")
        try:
            chat.wait("you ›")
            chat.type("create hello.py")
            chat.wait("Apply?")
            chat.shoot(out / "cli-chat-approval.png")
            chat.type("y")
            chat.wait("Done: hello.py")
            chat.type("/undo")
            chat.wait("Undone")
            chat.type("/foo")
            chat.wait("not a command")
            chat.shoot(out / "cli-chat-undo.png")
        finally:
            chat.close()
        (tmp / "ws2").mkdir()
        run = Term(tmp, 'run "create hello.py" -w ws2 --model scripted:demo')
        try:
            run.wait("Apply?")
            run.type("n")
            run.wait("What should it do instead?")
            run.type("call it greet.py")
            run.wait("Denied")
            run.shoot(out / "cli-run-inline.png")
        finally:
            run.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "docs/img")
