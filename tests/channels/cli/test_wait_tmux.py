"""The wait shows the work, in a real terminal (tmux): while a model streams a file, its lines show as
they come (and the command it forms), and the turn ends with one quiet line — time, tokens in and
out, tokens per second. The model is a fake Ollama on 127.0.0.1 streaming word by word, as a slow
local model does. Skipped when tmux is not installed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.channels.cli.test_chat_tmux import SRC, Screen
from tests.orchestra.ollama_server import FakeOllama

pytestmark = pytest.mark.timeout(240)
REPLY = ("~ write greet.py that greets its arguments\n#c0.9 #m0.9 #f0.9 #s0.9\n$ create @ greet.py\n---\n"
         "import sys\n\n\ndef main():\n    print(\"hi\", *sys.argv[1:])\n\n\nmain()\n---\n"
         "$ run @ python3 greet.py\n~ next: DONE\n")


def test_the_file_lines_stream_as_they_come_and_the_turn_ends_with_its_figures(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with FakeOllama("coder:7b") as server:
        server.pace = 0.12
        server.replies = [REPLY] * 4
        name = f"duckflow-wait-{uuid.uuid4().hex[:8]}"
        folder = tmp_path / "captures"
        folder.mkdir()
        env = (f"OLLAMA_HOST={server.url} DUCKFLOW_HOME={tmp_path / 'home'} DUCKFLOW_CONFIG={os.devnull} "
               f"PYTHONPATH={SRC}")
        cmd = (f'env {env} {sys.executable} -m duckflow run "Create greet.py that greets its arguments" -w {ws} '
               "--model ollama:coder:7b --mode single-call --auto-approve-workspace; echo EXIT=$?; sleep 60")
        subprocess.run(["tmux", "-L", name, "new-session", "-d", "-s", name, "-x", "100", "-y", "30", cmd], check=True)
        screen = Screen(name, folder)
        try:
            screen.wait_for("EXIT=", 120)
            history = screen.history()
            (folder / "final.txt").write_text(history)
            # a screen showed the file partly written, before its action line: it streamed
            partly = [c for c in screen.captures if "5 │     print(\"hi\"" in c and "● Create greet.py" not in c]
            assert partly, "no screen showed the file's lines while they were written"
            assert "Writing greet.py:" in history and "$ python3 greet.py" in history
            assert history.index("8 │ main()") < history.index("● Create greet.py")
            end = re.search(r"\d+(\.\d)? s · \d+ tokens in, \d+ out · [\d.]+ tokens/s · ollama:coder:7b", history)
            assert end, history
            assert "Traceback" not in history
        finally:
            subprocess.run(["tmux", "-L", name, "kill-server"], check=False, capture_output=True)


ASK = ('~ the task does not say the name\n#c0.9 #m0.9 #f0.9 #s0.9\n'
       '? "Which name should the script have?"\n  1. greet.py\n  2. hello.py\n')
HELLO = ('~ write hello.py as answered\n#c0.9 #m0.9 #f0.9 #s0.9\n$ create @ hello.py\n---\nprint("hi")\n---\n'
         '$ run @ python3 hello.py\n~ next: DONE\n')


def test_a_question_with_options_is_shown_and_the_run_waits_for_the_answer(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with FakeOllama("coder:7b") as server:
        server.replies = [ASK, HELLO, HELLO]
        name = f"duckflow-ask-{uuid.uuid4().hex[:8]}"
        folder = tmp_path / "captures"
        folder.mkdir()
        env = (f"OLLAMA_HOST={server.url} DUCKFLOW_HOME={tmp_path / 'home'} DUCKFLOW_CONFIG={os.devnull} "
               f"PYTHONPATH={SRC}")
        cmd = (f'env {env} {sys.executable} -m duckflow run "Create a script that prints hi" -w {ws} '
               "--model ollama:coder:7b --mode single-call --auto-approve-workspace; echo EXIT=$?; sleep 60")
        subprocess.run(["tmux", "-L", name, "new-session", "-d", "-s", name, "-x", "100", "-y", "30", cmd], check=True)
        screen = Screen(name, folder)
        try:
            screen.wait_for("Your answer ›", 120)
            shown = screen.history()
            assert "Which name should the script have?" in shown and "1. greet.py" in shown and "2. hello.py" in shown
            assert not list(ws.iterdir())  # nothing ran before the answer
            screen.type("2")
            screen.wait_for("EXIT=", 120)
            history = screen.history()
            (folder / "final.txt").write_text(history)
            assert (ws / "hello.py").exists() and not (ws / "greet.py").exists(), history
            assert "Answer: hello.py" in history and "Traceback" not in history
            assert history.count("Finished, not verified") <= 1  # the ending is said once
        finally:
            subprocess.run(["tmux", "-L", name, "kill-server"], check=False, capture_output=True)
