"""The wait shows the work, in a real terminal (tmux, 80x24): while a model streams a file (Sym-Ops or
DML), its last few lines show under the status line as they come (and the command it forms), the
scrollback keeps only the action and its diff, and the turn ends with one quiet line — time, tokens
in and out, tokens per second. The model is a fake Ollama on 127.0.0.1 streaming word by word, as a
slow local model does. Skipped when tmux is not installed."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.channels.cli.tmuxpane import Screen, needs_tmux, pane
from tests.orchestra.ollama_server import FakeOllama

pytestmark = [needs_tmux, pytest.mark.timeout(240)]
REPLY = ("~ write greet.py that greets its arguments\n#c0.9 #m0.9 #f0.9 #s0.9\n$ create @ greet.py\n---\n"
         "import sys\n\n\ndef main():\n    print(\"hi\", *sys.argv[1:])\n\n\nmain()\n---\n"
         "$ run @ python3 greet.py\n~ next: DONE\n")


def _finished(screen: Screen) -> str:
    """The scrollback once the run exited (kept beside the captures)."""
    screen.wait_for("EXIT=", 120)
    history = screen.history()
    (screen.folder / "final.txt").write_text(history)
    return history


def _run_streaming(tmp_path: Path, reply: str, codec: str) -> tuple[Screen, str, Path]:
    """`duckflow run` in an 80x24 tmux pane against a fake Ollama writing `reply` word by word."""
    ws = tmp_path / "ws"
    ws.mkdir()
    with FakeOllama("coder:7b") as server:
        server.pace = 0.12
        server.replies = [reply] * 4
        with pane(tmp_path, f"wait-{codec}", f'run "Create greet.py that greets its arguments" -w {ws} '
                  f"--model ollama:coder:7b --mode single-call --codec {codec} --auto-approve-workspace",
                  env={"OLLAMA_HOST": server.url}, size=(80, 24)) as screen:
            return screen, _finished(screen), ws


DML_REPLY = ("Thought: write greet.py that greets its arguments\nAction:\n🦆▶️[T:write_file|greet.py|\n"
             "import sys\n\n\ndef main():\n    print(\"hi\", *sys.argv[1:])\n\n\nmain()\n]◀️🦆\n"
             "🦆▶️[T:execute_shell|python3 greet.py]◀️🦆\nNext: DONE\n")


@pytest.mark.parametrize("reply, codec", [(REPLY, "symops"), (DML_REPLY, "dml")])
def test_the_file_lines_stream_as_they_come_and_the_turn_ends_with_its_figures(tmp_path: Path, reply: str,
                                                                              codec: str) -> None:
    screen, history, ws = _run_streaming(tmp_path, reply, codec)
    # a screen showed the file partly written, under the status line, before its action line: it streamed
    partly = [c for c in screen.captures if "5 │     print(\"hi\"" in c and "● Create greet.py" not in c]
    assert partly, "no screen showed the file's lines while they were written"
    assert any("Writing greet.py · line" in c for c in partly)
    assert all(len([ln for ln in c.splitlines() if " │ " in ln]) <= 4 for c in screen.captures)  # the last few
    assert any("$ python3 greet.py" in c for c in screen.captures)
    assert " │ " not in history and "🦆▶" not in history  # quiet: the scrollback keeps the action and its diff
    assert "● Create greet.py" in history and '+    print("hi", *sys.argv[1:])' in history
    assert (ws / "greet.py").exists()
    end = re.search(r"\d+(\.\d)? s · \d+ tokens in, \d+ out · [\d.]+ tokens/s · answered by ollama:coder:7b", history)
    assert end, history
    assert "Traceback" not in history


ASK = ('~ the task does not say the name\n#c0.9 #m0.9 #f0.9 #s0.9\n'
       '? "Which name should the script have?"\n  1. greet.py\n  2. hello.py\n')
HELLO = ('~ write hello.py as answered\n#c0.9 #m0.9 #f0.9 #s0.9\n$ create @ hello.py\n---\nprint("hi")\n---\n'
         '$ run @ python3 hello.py\n~ next: DONE\n')


def test_a_question_with_options_is_shown_and_the_run_waits_for_the_answer(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with FakeOllama("coder:7b") as server:
        server.replies = [ASK, HELLO, HELLO]
        with pane(tmp_path, "wait-ask", f'run "Create a script that prints hi" -w {ws} '
                  "--model ollama:coder:7b --mode single-call --auto-approve-workspace",
                  env={"OLLAMA_HOST": server.url}, size=(100, 30)) as screen:
            screen.wait_for("Your answer ›", 120)
            shown = screen.history()
            assert "Which name should the script have?" in shown and "1. greet.py" in shown and "2. hello.py" in shown
            assert not list(ws.iterdir())  # nothing ran before the answer
            screen.type("2")
            history = _finished(screen)
            assert (ws / "hello.py").exists() and not (ws / "greet.py").exists(), history
            assert "Answer: hello.py" in history and "Traceback" not in history
            assert history.count("Finished, not verified") <= 1  # the ending is said once


GREET = ('import sys\n\n\ndef main():\n    names = sys.argv[1:] or ["world"]\n    for name in names:\n'
         '        print(f"hello, {name}!")\n\n\nif __name__ == "__main__":\n    main()\n')


def test_a_native_tool_calls_file_streams_on_a_real_openai_wire(tmp_path: Path) -> None:
    """gpt-4o-mini behind a fake OpenAI server on 127.0.0.1 streams its write_file arguments a few
    characters at a time: the file's last lines show under the status line before its action line."""
    import asyncio
    import json
    import threading

    from tests.helpers.fakeserver import FakeServer, Reply, openai_stream

    asked = {"main": 0, "tools": 0}

    def decision(step: str, say: str, nxt: str = "continue") -> Reply:
        body = {"rationale": say, "goal_consistency": "yes", "constraint_check": "yes", "next_step": nxt,
                "step": step, "prompt_pattern": "base_main" if nxt == "done" else "base_main_specialized",
                "state_delta": {}, "reply": say}
        return Reply(chunks=openai_stream([json.dumps(body)], usage=(900, 60)))

    def call(name: str, args: dict[str, str]) -> Reply:
        raw = json.dumps(args)
        frags = [{"index": 0, "id": f"call_{name}", "type": "function", "function": {"name": name, "arguments": ""}}]
        frags += [{"index": 0, "function": {"arguments": raw[i:i + 3]}} for i in range(0, len(raw), 3)]
        return Reply(chunks=openai_stream([], tool_calls=frags, usage=(1200, len(raw) // 3)), chunk_delay=0.05)

    def answer(req: Any) -> Reply:
        if req.json.get("tools"):
            asked["tools"] += 1
            return call("write_file", {"path": "greet.py", "content": GREET}) if asked["tools"] == 1 else \
                call("execute_shell", {"command": "python3 greet.py Ada Linus"})
        asked["main"] += 1
        return decision("EXECUTION", ["I will write greet.py.", "Now I run it."][asked["main"] - 1]) \
            if asked["main"] <= 2 else decision("DONE", "Done: greet.py greets each name.", "done")

    loop = asyncio.new_event_loop()
    server = FakeServer().default("/v1/chat/completions", answer)
    started = threading.Event()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(server.start())
        started.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    started.wait(10)
    ws = tmp_path / "ws"
    ws.mkdir()
    try:
        with pane(tmp_path, "wait-native", f"run 'Create greet.py that greets each name given' -w {ws} "
                  "--model openai:gpt-4o-mini --mode two-call --auto-approve-workspace",
                  env={"OPENAI_BASE_URL": f"{server.url}/v1", "OPENAI_API_KEY": "sk-test"}, size=(80, 24)) as screen:
            history = _finished(screen)
        partly = [c for c in screen.captures if '5 │     names = sys.argv[1:] or ["world"]' in c
                  and "● Create greet.py" not in c]
        assert partly and "🦆 I will write greet.py." in partly[0], "no screen showed the file as it was written"
        assert all(len([ln for ln in c.splitlines() if " │ " in ln]) <= 4 for c in screen.captures)
        assert " │ " not in history and "● Create greet.py (+11 −0)" in history and (ws / "greet.py").read_text() == GREET
        assert "● Run python3 greet.py Ada Linus" in history
        assert re.search(r"\d+(\.\d)? s · [\d,]+ tokens in, \d+ out · [\d.]+ tokens/s · answered by openai:gpt-4o-mini", history)
        assert "Traceback" not in history
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
