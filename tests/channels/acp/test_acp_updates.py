"""Chunks to ACP session updates (channels/acp/updates.py): one entry per action, even when the call asked about runs under another id."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("acp", reason="the acp extra is not installed: pip install 'duckflow[acp]'")

from duckflow.channels.acp.updates import Updates  # noqa: E402
from duckflow.core.chunks import ToolCallChunk, ToolCallData, ToolResponseChunk, ToolResponseData  # noqa: E402


def test_a_call_asked_about_without_an_id_runs_as_the_same_entry(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")

    def read(rel: str) -> str | None:
        p = tmp_path / rel
        return p.read_text() if p.is_file() else None

    u = Updates(tmp_path, read)
    call = {"name": "write_file", "arguments": {"path": "a.py", "content": "x = 2\n"}}  # no id (a Sym-Ops call)
    opened, asked = u.permission_call("job1", {"operation": {"tool": "write_file", "paths": ["a.py"]}}, call)
    assert [o.session_update for o in opened] == ["tool_call"] and asked.tool_call_id == "job-job1"
    diff = next(c for c in asked.content if c.type == "diff")
    assert (diff.old_text, diff.new_text, diff.path) == ("x = 1\n", "x = 2\n", str(tmp_path / "a.py"))
    ran = u.feed(ToolCallChunk(agent="companion.specialized", data=ToolCallData(
        id="call_7", name="write_file", arguments=call["arguments"])))
    assert [(r.session_update, r.tool_call_id, r.status) for r in ran] == [("tool_call_update", "job-job1", "in_progress")]
    (tmp_path / "a.py").write_text("x = 2\n")
    done = u.feed(ToolResponseChunk(agent="companion.specialized", data=ToolResponseData(
        id="call_7", name="write_file", content='{"path": "a.py", "bytes": 6}')))
    update = next(r for r in done if r.session_update == "tool_call_update")
    assert update.tool_call_id == "job-job1" and update.status == "completed"
    written = next(c for c in update.content if c.type == "diff")
    assert (written.old_text, written.new_text) == ("x = 1\n", "x = 2\n")


def test_a_failed_call_is_failed_with_the_reason(tmp_path: Path) -> None:
    u = Updates(tmp_path, lambda rel: None)
    start = u.feed(ToolCallChunk(agent="companion.specialized", data=ToolCallData(
        id="c1", name="execute_shell", arguments={"command": "false"})))
    assert start[0].session_update == "tool_call" and start[0].kind == "execute" and start[0].title == "Run false"
    end = u.feed(ToolResponseChunk(agent="companion.specialized", data=ToolResponseData(
        id="c1", name="execute_shell", content='{"exit_code": 1, "stdout": "", "stderr": "boom"}', is_error=True)))
    update = next(r for r in end if r.session_update == "tool_call_update")
    assert update.status == "failed" and "boom" in update.title


def test_the_plan_is_the_editors_plan_and_a_command_shows_what_it_printed(tmp_path: Path) -> None:
    from duckflow.core.chunks import PlanChunk, PlanData

    u = Updates(tmp_path, lambda rel: None)
    plan = u.feed(PlanChunk(agent="companion", data=PlanData(
        plan_id="plan-20261207-1", status="running", actions=["create hello.py: write it", "run python3 hello.py"],
        states=["done", "running"])))
    assert [p.session_update for p in plan] == ["plan"]  # no "Plan: ..." text beside it
    assert [(e.content, e.status) for e in plan[0].entries] == [
        ("create hello.py", "completed"), ("run python3 hello.py", "in_progress")]
    failed = u.feed(PlanChunk(agent="companion", data=PlanData(
        plan_id="plan-20261207-1", status="failed", actions=["run python3 hello.py"], states=["failed"])))
    assert failed[0].entries[0].content == "run python3 hello.py (failed)"
    u.feed(ToolCallChunk(agent="companion.specialized", data=ToolCallData(
        id="c1", name="execute_shell", arguments={"command": "python3 hello.py"})))
    out = "\n".join(f"line {i}" for i in range(2000))
    end = u.feed(ToolResponseChunk(agent="companion.specialized", data=ToolResponseData(
        id="c1", name="execute_shell", content=json.dumps({"exit_code": 0, "stdout": out, "stderr": ""}))))
    update = next(r for r in end if r.session_update == "tool_call_update")
    shown = update.content[-1].content.text
    assert shown.startswith("```\n…") and shown.endswith("line 1999\n```") and len(shown) < 4100
