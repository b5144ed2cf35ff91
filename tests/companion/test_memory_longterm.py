"""Long-term memory belongs to the workspace (seed 001 §3.1): it outlives sessions, feeds Base, can be forgotten."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from duckflow.channels.cli.main import main
from duckflow.companion.factory import open_session
from duckflow.companion.store import SessionStore
from duckflow.llm.scripted import ScriptedModel
from tests.helpers.companion import decision


def _run_json(ws: Path, capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    code = main(["run", *args, "-w", str(ws), "--model", "scripted:demo", "--auto-approve-workspace", "--json"])
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 0, out
    return out


def test_two_runs_in_one_workspace_add_up_and_the_second_sees_the_first(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _run_json(tmp_path, capsys, "create hello.py")
    _run_json(tmp_path, capsys, "create hello.py")  # a new session (no --resume)
    store = SessionStore()
    try:
        mem = store.load_memory(str(tmp_path.resolve()))
        sessions = store.list()
    finally:
        store.close()
    # the second run's write would leave hello.py exactly as it is: not run, no card, not counted
    assert mem is not None and mem["successful_operations"] == 1 and mem["files_created"] == ["hello.py"]
    assert len(sessions) == 2 and len(mem["past_sessions"]) == 2  # type: ignore[arg-type]
    assert all("create hello.py → done" in line for line in mem["past_sessions"])  # type: ignore[union-attr]


def test_remember_survives_new_and_reaches_base_then_memory_forget_drops_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.setattr("sys.stdin", io.StringIO("/remember tests live in tests/\n/set style black\n/quit\n"))
    assert main(["chat", "-w", str(ws), "--model", "scripted:demo"]) == 0
    capsys.readouterr()
    model = ScriptedModel([decision("PLANNING", next_step="pending_user")], name="t")
    opened = open_session(ws, model=model, codec="native")  # a brand-new session (like --new)
    try:
        import asyncio

        asyncio.run(opened.session.handle_message("hello"))
    finally:
        opened.close()
    base = model.requests[0].messages[0].content
    assert "learned: tests live in tests/" in base and "style" in base
    assert main(["memory", "-w", str(ws)]) == 0
    listed = capsys.readouterr().out
    assert "learned 1: tests live in tests/" in listed and "setting style = black" in listed
    assert main(["memory", "forget", "tests live", "-w", str(ws)]) == 0
    assert "forgot: tests live in tests/" in capsys.readouterr().out
    again = ScriptedModel([decision("PLANNING", next_step="pending_user")], name="t2")
    opened = open_session(ws, model=again, codec="native")
    try:
        asyncio.run(opened.session.handle_message("hi"))
    finally:
        opened.close()
    assert "tests live in tests/" not in again.requests[0].messages[0].content
    assert main(["memory", "forget", "nothing-like-this", "-w", str(ws)]) != 0
    assert "nothing in the memory" in capsys.readouterr().err


async def test_past_sessions_reach_base_and_are_cut_first_when_over_budget(env: object) -> None:
    from duckflow.prompts.budget import LayerBudget

    e = env  # the shared fixture: one workspace, one store
    first = e.open([decision("PLANNING", next_step="pending_user", say="ok")])  # type: ignore[attr-defined]
    await first.session.handle_message("build the parser")
    first.session.note_session()
    model = ScriptedModel([decision("PLANNING", next_step="pending_user"),
                           decision("PLANNING", next_step="pending_user")], name="t")
    second = e.open(model)  # type: ignore[attr-defined]
    await second.session.handle_message("next")
    assert "Past sessions here:" in model.requests[0].messages[0].content
    assert "build the parser" in model.requests[0].messages[0].content
    second.session.budget = LayerBudget(1, 10_000, 10_000)  # Base can never fit: everything cuttable goes
    r = await second.session.handle_message("again")
    cuts = [c for c in r.chunks if c.type == "notice" and c.data.code == "budget_cut"]
    assert cuts and cuts[0].data.details["cuts"][0].startswith("past session:")
