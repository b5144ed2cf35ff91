"""The demo and the command line as a new user meets them: `duckflow chat|run --model scripted:demo`."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest

from duckflow.channels.cli.main import main
from duckflow.llm.scripted import ScriptedModel, ScriptStep
from duckflow.llm.types import ToolCall
from tests.helpers.companion import decision


def _chat(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], ws: Path, lines: str,
          *extra: str) -> tuple[int, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(lines))
    code = main(["chat", "-w", str(ws), "--model", "scripted:demo", *extra])
    out = capsys.readouterr()
    return code, out.out + out.err


def test_the_demo_holds_a_conversation_and_says_what_it_can_do(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _chat(monkeypatch, capsys, tmp_path,
                      "hi\nwhat can you do?\ncreate hello.py\nyes\nthanks\nand now?\n")
    assert code == 0 and "Traceback" not in out and "script has only" not in out
    assert out.count("I'm the scripted demo model") >= 3  # hi, the question, thanks, and now?
    assert "Create hello.py — 6 lines" in out and "Done: hello.py prints a friendly greeting" in out
    assert 'print("Hello from Duckflow!")' in (tmp_path / "hello.py").read_text()


def test_resume_after_a_grant_elsewhere_continues_and_does_not_replay(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = str(tmp_path)
    assert main(["run", "create hello.py", "-w", ws, "--model", "scripted:demo"]) == 4
    first = capsys.readouterr()
    job = re.search(r"duckflow approvals grant ([0-9a-f]{8})`", first.err)  # the real id, ready to paste
    assert job is not None and not (tmp_path / "hello.py").exists() and f"job {job.group(1)}" in first.out
    assert main(["approvals", "grant", job.group(1)]) == 0
    capsys.readouterr()
    assert main(["run", "--resume", "-w", ws, "--model", "scripted:demo"]) == 0
    second = capsys.readouterr().out
    assert "Create hello.py — 6 lines" not in second and "Plan:" not in second  # no replay
    assert "● Create hello.py (+6 −0)" in second and "Done: hello.py" in second
    assert (tmp_path / "hello.py").exists()
    # a third resume: the task is DONE; nothing is replayed, the model is not called
    assert main(["run", "--resume", "-w", ws, "--model", "scripted:demo"]) == 0
    third = capsys.readouterr().out
    assert "Nothing to continue" in third and "Create hello.py —" not in third and "🦆" not in third


def test_status_for_a_missing_workspace_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["status", "-w", "/nonexistent/duckflow-ws"]) != 0
    err = capsys.readouterr().err
    assert "workspace /nonexistent/duckflow-ws does not exist" in err and "no a session" not in err


async def test_search_code_finds_japanese_and_split_identifiers_in_a_companion_turn(env: Any) -> None:
    (env.root / "db.py").write_text('def connect_db():\n    """データベース接続を開く"""\n\n\nclass UserAccountManager:\n'
                                    "    pass\n")
    model = ScriptedModel([
        decision("PLANNING", "base_main_specialized", rationale="find the code"),
        ScriptStep(text="Plan: look", calls=[ToolCall("search_code", {"query": "データベース接続"}),
                                             ToolCall("search_code", {"query": "user account"})]),
    ], name="t")
    o = env.open(model)
    chunks = [c async for c in o.session.stream("where do we connect to the database?")]
    found = [c.data.content for c in chunks if c.type == "tool_response"]
    assert len(found) == 2 and "db.py:2" in found[0] and "UserAccountManager" in found[1]


def test_chat_resumes_a_cancelled_task_with_continue(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from duckflow.companion.factory import open_session
    from duckflow.companion.models import demo_model

    opened = open_session(tmp_path, model=demo_model())
    try:
        import asyncio

        asyncio.run(opened.session.handle_message("create hello.py"))  # plans, then stops before EXECUTION
        opened.session.note_cancelled()  # as Ctrl-C leaves it
    finally:
        opened.close()
    code, out = _chat(monkeypatch, capsys, tmp_path, "continue\nyes\n")
    assert code == 0 and "Last time the task “create hello.py” stopped part-way" in out
    assert "I'm the scripted demo model" not in out  # `continue` went on with the task
    assert (tmp_path / "hello.py").exists() and "Done: hello.py" in out
    assert main(["status", "-w", str(tmp_path), "--verbose"]) == 0
    status = capsys.readouterr().out
    assert "done · 2/2 actions done" in status and "2. [done] create hello.py" in status


def test_configured_block_patterns_guard_chat_messages(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text('[companion]\nblock_patterns = ["(?i)drop table"]\n')
    monkeypatch.setenv("DUCKFLOW_CONFIG", str(cfg))
    ws = tmp_path / "ws"
    ws.mkdir()
    code, out = _chat(monkeypatch, capsys, ws, "please DROP TABLE users\ncreate hello.py\nyes\n")
    assert code == 0 and "I can't take that request" in out and "companion.block_patterns" in out
    assert (ws / "hello.py").exists(), out  # the next message goes through
    cfg.write_text('[companion]\nblock_patterns = ["["]\n')
    assert main(["run", "hi", "-w", str(ws), "--model", "scripted:demo"]) == 1
    assert "'[' is not a regular expression" in capsys.readouterr().err


def test_a_model_that_repeats_a_denied_change_stops_and_asks_and_asking_again_allows_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # the demo model ignores the person's words and proposes the same file again
    code, out = _chat(monkeypatch, capsys, tmp_path,
                      "create hello.py\nn\nwrite it as greet.py instead\ncreate hello.py\ny\n")
    assert code == 0 and "Traceback" not in out
    out = " ".join(out.split())  # (lines wrap at the terminal's width)
    refused = "Refused: write hello.py again — you said no to it (“write it as greet.py instead”)"
    assert out.count(refused) == 2, out  # refused once, then once more: then the person decides
    assert out.count("It keeps proposing what you said no to.") == 1
    # the person asks for it again: the gate asks them again, and yes applies it
    assert out.count("Create hello.py — 6 lines") == 2 and "Done: hello.py" in out
    assert (tmp_path / "hello.py").exists()
