"""Keys people know, in a real terminal (tmux): Ctrl-C clears the typed line or cancels the running turn
and only a second Ctrl-C at an empty prompt quits; Esc cancels the turn; up-arrow history across
sessions of one workspace; multi-line input and paste; any free answer at the card. Skipped when tmux
is not installed."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.channels.cli.tmuxpane import Screen, duckflow, needs_tmux, pane

pytestmark = [needs_tmux, pytest.mark.timeout(240)]


def _prompt_line(screen: Screen) -> str:
    return next((ln for ln in reversed(screen.grab().splitlines()) if "you ›" in ln), "")


@contextmanager
def _chat(tmp_path: Path, name: str, ws: Path, delay: str = "0.02") -> Iterator[Screen]:
    with pane(tmp_path, name, f"chat -w {ws} --model scripted:demo", env={"DUCKFLOW_DEMO_DELAY": delay}) as screen:
        screen.wait_for("you ›", 30)
        yield screen


def test_ctrl_c_clears_the_line_and_only_a_second_one_at_an_empty_prompt_quits(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with _chat(tmp_path, "keys-ctrl-c", ws) as screen:
        screen.keys("-l", "something I typed")
        screen.wait_for("something I typed")
        screen.keys("C-c")  # clears the typed line, the chat goes on
        assert screen.wait_gone("something I typed", lambda: _prompt_line(screen))
        screen.keys("C-c")  # at an empty prompt: says how to quit
        screen.wait_for("Ctrl-C again to quit")
        assert "EXIT=" not in screen.history()
        screen.keys("C-c")  # the second one quits
        screen.wait_for("EXIT=0", 20)
        assert "Traceback" not in screen.history()


@pytest.mark.parametrize("key", ["C-c", "Escape"])
def test_ctrl_c_or_esc_cancels_the_running_turn_and_the_chat_goes_on(tmp_path: Path, key: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with _chat(tmp_path, f"keys-cancel-{key}", ws, delay="0.3") as screen:
        screen.type("create hello.py")
        screen.wait_for("🦆")
        screen.keys(key)
        screen.wait_for("Cancelled — nothing was changed.", 20)
        history = screen.history()
        assert "… (cancelled)" in history  # the half-written reply is marked as cancelled
        assert "Paused" not in history  # a cancelled turn, not a paused one
        screen.idle()
        assert "EXIT=" not in screen.history()  # cancelled, not quit
        screen.type("/status")
        screen.wait_for("Task: create hello.py", 20)  # the task is kept
        screen.keys("C-d")
        screen.wait_for("EXIT=0", 20)


def test_up_arrow_history_across_sessions_of_one_workspace(tmp_path: Path) -> None:
    ws, other = tmp_path / "ws", tmp_path / "other"
    ws.mkdir()
    other.mkdir()
    with _chat(tmp_path, "keys-history-1", ws) as first:
        first.type("/status")
        first.wait_for("Task:", 20)
        first.keys("C-d")
        first.wait_for("EXIT=0", 20)
    with _chat(tmp_path, "keys-history-2", ws) as again:
        again.keys("Up")
        again.wait_for("you › /status")
    with _chat(tmp_path, "keys-history-3", other) as elsewhere:
        elsewhere.keys("Up")
        time.sleep(1)
        assert "/status" not in _prompt_line(elsewhere)  # another workspace has its own history


def test_multi_line_input_and_a_pasted_block_wait_for_enter(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with _chat(tmp_path, "keys-multiline", ws) as screen:
        screen.keys("-l", "first line")
        screen.keys("Escape", "Enter")  # Alt+Enter: a new line, nothing sent
        screen.keys("-l", "second line")
        screen.wait_for("second line")
        screen.paste("\npasted one\npasted two")
        screen.wait_for("pasted two")
        time.sleep(0.5)
        assert "🦆" not in screen.history()  # nothing was sent before Enter
        screen.keys("C-c")  # and Ctrl-C clears all of it
        assert screen.wait_gone("pasted two")


def test_a_free_answer_at_the_card_is_a_no_with_those_words(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with _chat(tmp_path, "keys-free-answer", ws) as screen:
        screen.type("create hello.py")
        screen.wait_for("Apply? y(es)")
        screen.idle()
        screen.type("no — call it greet.py instead")  # one answer: not n, Enter, then the words
        screen.wait_for("Denied")
        history = screen.history()
        assert "What should it do instead?" not in history
        assert not (ws / "hello.py").exists()


def test_esc_after_a_write_says_what_changed_undo_takes_it_back_and_the_next_turn_starts_clean(tmp_path: Path) -> None:
    """Cancelled after hello.py was written: the line says so (the checkpoint holds it), /undo takes it
    back, the partial reply is in the conversation's history, and a new message runs as any other."""
    ws = tmp_path / "ws"
    ws.mkdir()
    with _chat(tmp_path, "keys-cancel-after-write", ws, delay="0.15") as screen:
        screen.type("create hello.py")
        screen.wait_for("Apply? y(es)", 60)
        screen.idle()
        ducks = screen.count("🦆")
        screen.type("y")
        screen.wait_for("● Create hello.py (+6 −0)", 30)
        screen.wait_for("🦆", 30, more_than=ducks)  # the review is being written
        assert (ws / "hello.py").exists()
        screen.keys("Escape")
        history = screen.wait_for("Cancelled — 1 file changed so far (hello.py); /undo to take it back.", 20)
        assert "… (cancelled)" in history and "Paused" not in history
        screen.idle()
        assert "EXIT=" not in screen.history()
        screen.type("/undo")
        screen.wait_for("Undone: removed hello.py (the file it created)", 20)
        assert not (ws / "hello.py").exists()
        cards = screen.count("Create hello.py — 6 lines")
        screen.type("create hello.py")  # the next message: a turn like any other, up to its card
        screen.wait_for("Create hello.py — 6 lines", 60, more_than=cards)
        screen.wait_for("Apply? y(es)", 60, more_than=1)
        screen.keys("C-d")
        screen.wait_for("EXIT=0", 20)
        assert "Traceback" not in screen.history()
    status = duckflow(tmp_path, "status", "-w", str(ws), "--json")
    replies = [e for e in json.loads(status.stdout).get("exchanges", []) if "(cancelled)" in str(e)]
    assert replies, status.stdout  # the partial reply is kept in the conversation, marked as cancelled
