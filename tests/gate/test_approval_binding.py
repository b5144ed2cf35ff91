"""What was approved is what runs (issue 8): an approval binds to the content it was shown
against and to one workspace. Driven through the real `duckflow run` / `approvals` commands
with the built-in scripted demo (which asks to create hello.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from duckflow.channels.cli.main import main as cli
from duckflow.gate import Gate
from duckflow.paths import duckflow_home

MINE = "print('my own hello')\n"


def _json_run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any], str]:
    capsys.readouterr()
    rc = cli(["run", *argv, "--model", "scripted:demo", "--json"])
    cap = capsys.readouterr()
    lines = cap.out.strip().splitlines()
    return rc, (json.loads(lines[-1]) if lines else {}), cap.err


def _pending_job(capsys: pytest.CaptureFixture[str], root: Path) -> tuple[str, str]:
    rc, out, _ = _json_run(capsys, "Create hello.py", "-w", str(root))
    assert rc == 4 and out["pending"]["job_id"], out
    return out["session_id"], out["pending"]["job_id"]


def test_a_create_granted_after_the_person_wrote_the_file_is_asked_again(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    _, job = _pending_job(capsys, root)
    (root / "hello.py").write_text(MINE)  # the person writes their own, then grants the old job
    capsys.readouterr()
    assert cli(["approvals", "grant", job, "--by", "cli:alice"]) == 0
    assert "note: hello.py did not exist when the approval was asked and now exists" in capsys.readouterr().out
    rc, out, _ = _json_run(capsys, "--resume", "-w", str(root))
    assert (root / "hello.py").read_text() == MINE  # not silently overwritten
    assert rc == 4 and out["ending"] == "approval"
    again = out["pending"]["job_id"]
    assert again != job
    with Gate(duckflow_home() / "gate.db") as gate:
        new = gate.get(again)
    assert new.status == "pending"
    assert "-print('my own hello')" in new.request.diff_preview  # shown against what is there now
    # the person sees the real diff and says yes: now it runs
    assert cli(["approvals", "grant", again]) == 0
    rc, out, _ = _json_run(capsys, "--resume", "-w", str(root))
    assert "Hello from Duckflow" in (root / "hello.py").read_text()


def test_the_reason_is_said_in_the_session(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    sid, job = _pending_job(capsys, root)
    (root / "hello.py").write_text(MINE)
    assert cli(["approvals", "grant", job]) == 0
    capsys.readouterr()
    assert cli(["run", "--resume", "-w", str(root), "--model", "scripted:demo"]) == 4
    text = capsys.readouterr().out
    assert "hello.py did not exist when the approval was asked and now exists" in " ".join(text.split())
    assert (root / "hello.py").read_text() == MINE


def test_an_existing_file_changed_after_the_approval_is_not_overwritten(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "hello.py").write_text("print('v1')\n")
    _, job = _pending_job(capsys, root)
    (root / "hello.py").write_text("print('v2, edited meanwhile')\n")
    assert cli(["approvals", "grant", job]) == 0
    rc, out, _ = _json_run(capsys, "--resume", "-w", str(root))
    assert rc == 4 and out["pending"]["job_id"] != job
    assert (root / "hello.py").read_text() == "print('v2, edited meanwhile')\n"


def test_an_unchanged_file_runs_as_approved(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    _, job = _pending_job(capsys, root)
    assert cli(["approvals", "grant", job]) == 0
    _json_run(capsys, "--resume", "-w", str(root))  # (the demo script then starts over: a new job)
    assert "Hello from Duckflow" in (root / "hello.py").read_text()
    with Gate(duckflow_home() / "gate.db") as gate:
        assert gate.get(job).status == "granted"


def test_a_session_from_workspace_a_cannot_run_in_workspace_b(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    sid, job = _pending_job(capsys, a)
    assert cli(["approvals", "grant", job]) == 0
    capsys.readouterr()
    rc = cli(["run", "--session", sid, "-w", str(b), "--model", "scripted:demo"])
    err = capsys.readouterr().err
    assert rc == 1 and f"belongs to workspace {a.resolve()}" in err and "Traceback" not in err
    assert list(b.iterdir()) == [] and not (a / "hello.py").exists()


async def test_a_job_asked_in_workspace_a_is_refused_by_a_runner_in_b(tmp_path: Path) -> None:
    """The tool path itself refuses, whatever brought the job there."""
    from duckflow.companion.actions import ActionRunner
    from duckflow.gate import guarded_operation
    from duckflow.llm.types import ToolCall
    from duckflow.workspace.guard import WorkspaceGuard
    from duckflow.workspace.tools import workspace_tools

    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    call = ToolCall("write_file", {"path": "x.txt", "content": "from A"})
    with Gate(tmp_path / "gate.db") as gate:
        out = gate.submit(guarded_operation(call.name, call.arguments, WorkspaceGuard(a)))
        assert out.decision == "pending" and out.job_id
        gate.grant(out.job_id, "cli:alice")
        runner = ActionRunner(b.resolve(), workspace_tools(b), gate)
        done = await runner.run_approved(out.job_id, call)
    assert done.status == "refused" and "belong to one workspace" in done.content
    assert not (b / "x.txt").exists()


async def test_a_folder_delete_granted_after_a_file_was_added_is_asked_again(env: Any) -> None:
    from duckflow.llm.scripted import tool_call
    from tests.helpers.companion import decision

    (env.root / "old").mkdir()
    (env.root / "old" / "a.txt").write_text("a")
    o = env.open([decision("EXECUTION", "base_main_specialized", rationale="clean up"),
                  tool_call("delete_path", path="old", recursive=True)])
    first = await o.session.handle_message("remove old/")
    assert first.pending and "delete" in first.pending["request"]["hard_required"]
    (env.root / "old" / "thesis.tex").write_text("a year of work")  # added before the grant
    second = await o.session.answer_approval(True, by="cli:alice")
    assert (env.root / "old" / "thesis.tex").read_text() == "a year of work"
    assert second.pending and second.pending["job_id"] != first.pending["job_id"]
    assert "old (folder) changed since the approval was asked" in second.outcomes[0].content
