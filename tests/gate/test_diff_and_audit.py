"""Unified diff previews with a size cap, and the audit log (SQLite + JSONL, secrets masked)."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

from duckflow.gate import AutoApproveScope, Gate, Operation, cap_diff, unified_diff
from duckflow.gate.audit import WITHHELD

SECRET = "AKIAIOSFODNN7EXAMPLE"
GH_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def test_unified_diff_of_a_change() -> None:
    d = unified_diff("src/a.py", "x = 1\ny = 2\n", "x = 1\ny = 3\n")
    assert d.splitlines() == ["--- a/src/a.py", "+++ b/src/a.py", "@@ -1,2 +1,2 @@",
                              " x = 1", "-y = 2", "+y = 3"]


def test_unified_diff_of_created_and_deleted_files() -> None:
    created = unified_diff("new.txt", None, "hello\n")
    assert created.startswith("--- /dev/null\n+++ b/new.txt\n") and "+hello" in created
    deleted = unified_diff("old.txt", "bye\n", None)
    assert deleted.startswith("--- a/old.txt\n+++ /dev/null\n") and "-bye" in deleted


def test_unified_diff_marks_a_missing_final_newline_and_is_empty_when_equal() -> None:
    d = unified_diff("a", "one\n", "one\ntwo")
    assert "+two\n\\ No newline at end of file\n" in d
    assert unified_diff("a", "same\n", "same\n") == ""


def test_diff_is_capped_with_a_visible_note() -> None:
    old = "".join(f"line {i}\n" for i in range(1000))
    new = "".join(f"LINE {i}\n" for i in range(1000))
    d = unified_diff("big.txt", old, new, max_lines=50)
    lines = d.splitlines()
    assert len(lines) == 51
    assert lines[-1].startswith("... diff cut: ") and "more line(s) not shown" in lines[-1]
    assert len(unified_diff("big.txt", old, new, max_chars=500)) < 600
    assert cap_diff("a\nb\n", max_lines=5) == "a\nb\n"


def test_request_carries_a_capped_diff_preview(gate: Gate) -> None:
    big = "".join(f"+{i}\n" for i in range(5000))
    out = gate.submit(Operation("write", paths=("a.txt",), diff=big))
    assert out.request is not None
    assert out.request.diff_preview.endswith("more line(s) not shown\n")
    assert len(out.request.diff_preview) <= 20_100


def _sanitizer_available() -> bool:
    try:
        return importlib.util.find_spec("duckflow.security.sanitizer") is not None
    except ImportError:
        return False


def test_audit_log_records_requests_and_decisions_with_secrets_masked(gate: Gate) -> None:
    op = Operation("edit", tool="edit_file", paths=("src/config.py",), task_type="feature")
    out = gate.submit(op, intent="rotate the key", rationale=f"the old key {SECRET} leaked",
                      impact="config only", alternatives="revoke by hand",
                      diff_preview=unified_diff("src/config.py", f"KEY = '{SECRET}'\n", "KEY = env\n"))
    assert out.job_id is not None
    gate.decide(out.job_id, False, by="cli:alice", note=f"use {GH_TOKEN} instead")
    gate.autoapprove.on(AutoApproveScope(task_types=("*",), tools=("*",), paths=("*",),
                                         deny_operations=()), ttl_min=5, by="cli:alice")
    auto = gate.submit(Operation("write", tool="write_file", paths=("docs/a.md",)))
    gate.autoapprove.off(by="cli:bob")

    text = gate.audit.path.read_text()
    assert gate.audit.path == gate.db_path.with_name("audit.jsonl")
    lines = [json.loads(line) for line in text.splitlines()]
    assert [e["event"] for e in lines] == [
        "approval.requested", "approval.denied", "autoapprove.on", "approval.requested",
        "approval.auto_approved", "autoapprove.off"]
    rows = gate.audit_entries()
    assert [r["event"] for r in rows] == [e["event"] for e in lines]
    db_text = json.dumps(rows)
    for secret in (SECRET, GH_TOKEN):
        assert secret not in text
        assert secret not in db_text

    requested, denied = lines[0], lines[1]
    assert requested["job_id"] == out.job_id and requested["by"] == "session:test"
    assert requested["approval_status"] == "pending" and requested["kind"] == "edit"
    assert requested["risk"] == "low" and requested["reversible"] is True
    assert requested["at"].endswith("Z") and requested["paths"] != []
    assert denied["job_id"] == out.job_id and denied["by"] == "cli:alice"
    assert denied["approval_status"] == "denied"
    assert lines[4]["by"].startswith("auto:scope#") and lines[4]["job_id"] == auto.job_id
    assert lines[5]["by"] == "cli:bob"
    if _sanitizer_available():
        # the number counts distinct secrets the process's sanitizer has seen (other tests too)
        assert re.fullmatch(r"the old key \[SECRET:aws_access_key#\d+\] leaked", requested["rationale"])
        assert "[SECRET:" in requested["diff_preview"] and "[SECRET:" in denied["note"]
    else:
        assert requested["rationale"] == WITHHELD
    # the job itself keeps the real text for the person who decides
    assert SECRET in gate.get(out.job_id).request.rationale


def test_audit_of_a_job_by_prefix(gate: Gate) -> None:
    out = gate.submit(Operation("delete", paths=("a.py",)))
    assert out.job_id is not None
    gate.decide(out.job_id, True, by="cli:alice")
    events = [r["event"] for r in gate.audit_entries(out.job_id[:6])]
    assert events == ["approval.requested", "approval.granted"]


def test_audit_file_is_append_only_across_instances(db_path: Path) -> None:
    with Gate(db_path) as a:
        a.submit(Operation("write", paths=("x",)))
    with Gate(db_path) as b:
        b.submit(Operation("write", paths=("y",)))
        assert len(b.audit.read_file()) == 2
