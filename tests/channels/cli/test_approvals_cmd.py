"""`duckflow approvals` and `duckflow autoapprove`, run through the real command dispatcher."""

from __future__ import annotations

import json

import pytest

from duckflow.channels.cli.main import main
from duckflow.gate import Gate, Operation
from duckflow.paths import duckflow_home


def _submit(op: Operation | None = None, **kw: str) -> str:
    with Gate(duckflow_home() / "gate.db") as gate:
        out = gate.submit(op or Operation("write", tool="write_file", paths=("src/a.py",)),
                          summary=kw.get("summary", "Fix the parser"), intent="fix")
        assert out.job_id is not None
        return out.job_id


def test_list_says_what_to_do_next(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["approvals"]) == 0
    assert "No pending approvals" in capsys.readouterr().out
    job = _submit()
    assert main(["approvals", "list"]) == 0
    out = capsys.readouterr().out
    assert "1 pending approval:" in out and "Write src/a.py — Fix the parser" in out
    assert f"duckflow approvals grant {job[:8]}" in out


def test_show_grant_and_second_answer(capsys: pytest.CaptureFixture[str]) -> None:
    job = _submit(Operation("delete", tool="delete_path", paths=("old.py",)), summary="Remove old.py")
    assert main(["approvals", "show", job[:5]]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Delete old.py  (job {job[:8]})") and "A person must decide: it deletes files" in out
    assert "Status: pending" in out and "reversible" not in out
    assert main(["approvals", "grant", job[:5], "--by", "cli:alice", "--note", "fine"]) == 0
    assert f"Granted {job[:8]}" in capsys.readouterr().out
    assert main(["approvals", "deny", job[:5]]) == 1
    err = capsys.readouterr().err
    assert "already granted" in err and "cannot be answered twice" in err
    assert main(["approvals", "show", job, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "granted" and data["decision"]["by"] == "cli:alice"
    assert data["decision"]["note"] == "fine"


def test_unknown_job_and_missing_id(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["approvals", "grant", "deadbeef"]) == 1
    assert "no approval job matches 'deadbeef'" in capsys.readouterr().err
    assert main(["approvals", "deny"]) == 1
    assert "needs a job id" in capsys.readouterr().err


def test_list_json_and_all(capsys: pytest.CaptureFixture[str]) -> None:
    a = _submit()
    b = _submit()
    main(["approvals", "deny", a, "--json"])
    assert json.loads(capsys.readouterr().out)["status"] == "denied"
    assert main(["approvals", "list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["pending"] == 1 and [j["job_id"] for j in data["jobs"]] == [b]
    assert main(["approvals", "list", "--all"]) == 0
    out = capsys.readouterr().out
    assert "2 recent approval job(s)" in out and "denied" in out


def test_autoapprove_on_status_off(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["autoapprove", "status"]) == 0
    assert "Auto-approve is OFF" in capsys.readouterr().out
    assert main(["autoapprove", "on", "--ttl", "15", "--paths", "docs/", "notes",
                 "--task-types", "*", "--json"]) == 0
    on = json.loads(capsys.readouterr().out)
    assert on["enabled"] and on["scope"]["paths"] == ["docs/", "notes"]
    assert on["scope"]["deny_operations"] == ["delete", "rename", "push_public"]
    assert 14.9 <= on["minutes_left"] <= 15.0
    with Gate(duckflow_home() / "gate.db") as gate:
        out = gate.submit(Operation("write", tool="write_file", paths=("notes/x.md",)))
        assert out.decision == "auto_approved"
    assert main(["autoapprove", "status"]) == 0
    assert f"scope#{on['id']}" in capsys.readouterr().out
    assert main(["autoapprove", "off"]) == 0
    assert "Auto-approve is OFF" in capsys.readouterr().out
    with Gate(duckflow_home() / "gate.db") as gate:
        out = gate.submit(Operation("write", tool="write_file", paths=("notes/y.md",)))
        assert out.decision == "pending"
    assert main(["autoapprove", "status", "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["enabled"] is False and status["last"]["disabled_by"].startswith("cli:")


def test_autoapprove_rejects_a_zero_ttl(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["autoapprove", "on", "--ttl", "0"]) == 1
    assert "TTL must be more than 0" in capsys.readouterr().err


def test_autoapprove_deny_alone_clears_the_deny_list_but_not_hard_required(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["autoapprove", "on", "--paths", "*", "--task-types", "*", "--deny", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["scope"]["deny_operations"] == []
    with Gate(duckflow_home() / "gate.db") as gate:
        assert gate.submit(Operation("delete", paths=("a.md",))).decision == "pending"
