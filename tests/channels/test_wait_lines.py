"""The wait shows the work: the file's lines and the command as a model writes them, and one quiet line
that ends the turn (time, tokens in/out, tokens per second, and where the time went when it was long)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from duckflow.channels.present import Presenter, visible
from duckflow.channels.turnclock import TurnClock
from duckflow.core.chunks import (
    DoneChunk,
    DoneData,
    ProgressChunk,
    ProgressData,
    ToolCallChunk,
    ToolCallData,
    ToolResponseChunk,
    ToolResponseData,
    UsageChunk,
    UsageData,
    delta,
)

T0 = datetime(2026, 12, 7, 12, 0, 0, tzinfo=UTC)


def at(chunk: Any, seconds: float) -> Any:
    chunk.time = (T0 + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")
    return chunk


def test_the_files_lines_and_the_command_show_as_they_are_written() -> None:
    p = Presenter()
    text = "~ write it\n$ create @ greet.py\n---\nimport sys\nprint('hi')\n---\n$ run @ python3 greet.py\n"
    shown: list[str] = []
    for i in range(0, len(text), 7):  # in pieces that cut lines anywhere
        shown += [ln.text for ln in p.feed(delta("companion.specialized", text[i:i + 7]))
                  if ln.kind != "status" and visible(ln, "person")]
    assert shown == ["  Writing greet.py:", "    1 │ import sys", "    2 │ print('hi')", "  $ python3 greet.py"]
    assert p.waiting.startswith("Writing")


def test_a_long_turn_ends_with_its_time_tokens_speed_and_where_the_time_went() -> None:
    clock = TurnClock()
    agent = "companion"
    chunks = [
        at(ProgressChunk(agent=agent, data=ProgressData(phase="start", what="asking local:qwen (single)")), 0),
        at(ProgressChunk(agent=agent, data=ProgressData(phase="start", what="loading", stage="loading")), 0.1),
        at(ProgressChunk(agent=agent, data=ProgressData(phase="start", what="reading the prompt", stage="prompt")), 4),
        at(ProgressChunk(agent=agent, data=ProgressData(phase="start", what="writing", stage="writing")), 39),
        at(ProgressChunk(agent=agent, data=ProgressData(phase="end", what="asking local:qwen (single)")), 173),
        at(UsageChunk(agent=agent, data=UsageData(prompt_tokens=505, completion_tokens=286, model="local:qwen")), 173),
        at(ToolCallChunk(agent=agent, data=ToolCallData(id="1", name="execute_shell", arguments={})), 174),
        at(ToolResponseChunk(agent=agent, data=ToolResponseData(id="1", name="execute_shell", content="{}")), 177),
    ]
    for c in chunks:
        assert clock.feed(c) is None
    line = clock.feed(at(DoneChunk(agent=agent, data=DoneData(text="done", ending="done")), 178))
    assert line == ("2 min 58 s · 505 tokens in, 286 out · 2.1 tokens/s · loading 3.9 s, reading the prompt 35 s, "
                    "writing 2 min 14 s, running tools and checks 3.0 s · answered by local:qwen")


def test_a_short_turn_says_only_time_tokens_and_speed_and_a_turn_with_no_model_says_nothing() -> None:
    clock = TurnClock()
    agent = "companion"
    clock.feed(at(ProgressChunk(agent=agent, data=ProgressData(phase="start", what="asking openai:gpt (main)")), 0))
    clock.feed(at(ProgressChunk(agent=agent, data=ProgressData(phase="end", what="asking openai:gpt (main)")), 2))
    clock.feed(at(UsageChunk(agent=agent, data=UsageData(prompt_tokens=1200, completion_tokens=80, model="x")), 2))
    assert clock.feed(at(DoneChunk(agent=agent, data=DoneData(text="ok")), 2.5)) == \
        "2.5 s · 1,200 tokens in, 80 out · 40 tokens/s · answered by x"
    assert clock.feed(at(DoneChunk(agent=agent, data=DoneData(text="/status")), 3)) is None


DML = ("Thought: write greet.py\nAction:\n🦆▶️[T:write_file|greet.py|\nimport sys\nprint('hi')]◀️🦆\n"
       "🦆▶[T:execute_shell|python3 greet.py]◀🦆\n🦆▶️[T:write_file|one.py|print(1)]◀️🦆\nNext: DONE\n")


def test_a_dml_reply_shows_the_files_lines_and_the_command_as_they_are_written() -> None:
    p = Presenter()
    shown: list[str] = []
    for i in range(0, len(DML), 5):  # cuts inside the emoji markers too
        shown += [ln.text for ln in p.feed(delta("companion.specialized", DML[i:i + 5]))
                  if ln.kind != "status" and visible(ln, "person")]
    assert shown == ["  Writing greet.py:", "    1 │ import sys", "    2 │ print('hi')", "  $ python3 greet.py",
                     "  Writing one.py:", "    1 │ print(1)"]


def test_a_native_calls_arguments_show_as_they_form() -> None:
    from duckflow.core.chunks import ToolCallDeltaChunk, ToolCallDeltaData

    def grow(name: str, key: str, text: str = "", done: bool = False) -> Any:
        return ToolCallDeltaChunk(agent="companion.specialized", data=ToolCallDeltaData(
            id=name, name=name, key=key, text=text, done=done))

    p = Presenter()
    said = [p.feed(c) for c in [grow("write_file", "path", "src/gr"), grow("write_file", "path", "eet.py"),
                                grow("write_file", "path", done=True), grow("write_file", "content", "import sys\npri"),
                                grow("write_file", "content", "nt('hi')"), grow("write_file", "content", done=True),
                                grow("execute_shell", "command", "python3 src/gr")]]
    shown = [ln.text for lines in said for ln in lines if ln.kind != "status" and visible(ln, "person")]
    assert shown == ["  Writing src/greet.py:", "    1 │ import sys", "    2 │ print('hi')"]
    assert p.waiting == "Writing a command · $ python3 src/gr"  # the command being formed
    done = [ln.text for c in [grow("execute_shell", "command", "eet.py"), grow("execute_shell", "command", done=True)]
            for ln in p.feed(c) if ln.kind != "status"]
    assert done == ["  $ python3 src/greet.py"]


def test_chat_keeps_the_file_out_of_the_scrollback_for_its_bottom_bar() -> None:
    import io

    from rich.console import Console

    from duckflow.channels.cli.render import Renderer

    out = io.StringIO()
    render = Renderer(Console(file=out, width=80), live_line=True)  # as `duckflow chat` on a terminal
    render(ProgressChunk(agent="companion.specialized", data=ProgressData(phase="start", what="asking m (single)")))
    bar = []
    for i in range(0, len(DML), 4):
        render(delta("companion.specialized", DML[i:i + 4]))
        now = (render.window[-1].strip() if render.window else "", render.activity)
        if not bar or bar[-1] != now:
            bar.append(now)
    shown = [b for b in bar if b[0]]
    assert shown == [("1 │ import sys", "Writing greet.py · line 1"), ("2 │ print('hi')", "Writing greet.py · line 2"),
                     ("$ python3 greet.py", "Writing a command · $ python3 greet.py"), ("1 │ print(1)", "Writing one.py · line 1")]
    assert "│" not in out.getvalue() and "greet.py" not in out.getvalue()  # nothing of it in the scrollback
    render(ProgressChunk(agent="companion.specialized", data=ProgressData(phase="end", what="asking m (single)")))
    assert render.window == []  # the call ended: its card or action follows
