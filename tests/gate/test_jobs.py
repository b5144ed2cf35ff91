"""Approval jobs: restart, answering twice, prefixes, expiry, and wait() across processes."""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from pathlib import Path

import pytest

from duckflow.gate import (
    AlreadyDecided,
    AmbiguousJob,
    AutoApproveScope,
    Gate,
    GatePolicy,
    JobExpired,
    Operation,
    UnknownJob,
    requires_gate,
)
from duckflow.paths import duckflow_home
from tests.helpers import FakeClock

WRITE = Operation("write", tool="write_file", paths=("src/app.py",), size=42)


def test_read_only_operations_are_allowed_without_a_job(gate: Gate) -> None:
    for kind in ("read", "list", "search"):
        out = gate.submit(Operation(kind, paths=("src/app.py",)))
        assert out.decision == "allowed" and out.job_id is None
    assert gate.history() == []


@pytest.mark.parametrize("kind", ["write", "edit", "create", "mkdir", "delete", "rename", "execute",
                                  "test", "network", "something_new"])
def test_write_delete_execute_always_pass_the_gate(kind: str) -> None:
    assert requires_gate(Operation(kind))


def test_read_outside_the_workspace_needs_the_gate() -> None:
    assert not requires_gate(Operation("read", paths=("a.txt",)))
    assert requires_gate(Operation("read", paths=("../x",), outside_workspace=True))


def test_guard_refusal_is_recorded_as_refused(gate: Gate) -> None:
    out = gate.submit(Operation("write", paths=("bin/x.exe",), refused="dangerous extension .exe"))
    assert out.decision == "refused" and not out.may_proceed
    assert "dangerous extension" in out.reason
    assert out.job_id is not None and gate.get(out.job_id).status == "refused"
    assert gate.pending() == []


def test_configured_refusal(db_path: Path, clock: FakeClock) -> None:
    with Gate(db_path, GatePolicy(refuse_operations=frozenset({"push_public"})), clock=clock) as gate:
        out = gate.submit(Operation("push_public", command="git push"))
        assert out.decision == "refused" and "gate.refuse_operations" in out.reason


def test_pending_approval_survives_a_restart_and_is_answered(db_path: Path, clock: FakeClock) -> None:
    first = Gate(db_path, GatePolicy(), clock=clock, requested_by="session:s1")
    out = first.submit(WRITE, intent="fix the bug", rationale="the test fails",
                       impact="one function", alternatives="leave it", summary="Fix off-by-one")
    assert out.decision == "pending" and out.job_id is not None
    first.close()

    second = Gate(db_path, GatePolicy(), clock=clock)
    [job] = second.pending()
    assert job.job_id == out.job_id
    r = job.request
    assert (r.intent, r.rationale, r.impact, r.alternatives) == (
        "fix the bug", "the test fails", "one function", "leave it")
    assert r.summary == "Fix off-by-one" and r.requested_by == "session:s1"
    assert r.operation == WRITE and r.affected == ("src/app.py",) and r.reversible
    decision = second.decide(out.job_id[:6], True, by="cli:alice", note="looks right")
    assert decision.granted and decision.by == "cli:alice" and decision.note == "looks right"
    assert second.get(out.job_id).status == "granted"
    assert second.pending() == []
    second.close()


def test_answering_twice_is_refused(gate: Gate) -> None:
    out = gate.submit(WRITE)
    assert out.job_id is not None
    gate.decide(out.job_id, False, by="cli:alice", note="not now")
    with pytest.raises(AlreadyDecided, match="already denied"):
        gate.decide(out.job_id, True, by="cli:bob")
    job = gate.get(out.job_id)
    assert job.status == "denied" and job.decision is not None and job.decision.by == "cli:alice"


def test_auto_approved_job_cannot_be_answered(gate: Gate) -> None:
    wide = AutoApproveScope(task_types=("*",), tools=("*",), paths=("*",), deny_operations=())
    gate.autoapprove.on(wide, ttl_min=5, by="t")
    out = gate.submit(WRITE)
    assert out.decision == "auto_approved" and out.job_id is not None
    with pytest.raises(AlreadyDecided):
        gate.decide(out.job_id, False, by="cli:alice")


def test_job_prefixes(gate: Gate, monkeypatch: pytest.MonkeyPatch) -> None:
    ids = iter(["abcd1111" + "0" * 24, "abcd2222" + "0" * 24])
    monkeypatch.setattr("duckflow.gate.gate.uuid.uuid4", lambda: uuid.UUID(next(ids)))
    a = gate.submit(WRITE).job_id
    b = gate.submit(WRITE).job_id
    assert a and b
    assert gate.get("abcd1").job_id == a
    assert gate.get("ABCD2").job_id == b
    with pytest.raises(AmbiguousJob):
        gate.get("abcd")
    with pytest.raises(UnknownJob):
        gate.get("ffff")
    with pytest.raises(UnknownJob):
        gate.get("ab")  # too short to be a prefix


def test_pending_jobs_expire_when_configured(db_path: Path, clock: FakeClock) -> None:
    with Gate(db_path, GatePolicy(pending_expiry_min=10), clock=clock) as gate:
        out = gate.submit(WRITE)
        assert out.job_id is not None
        clock.advance(minutes=9)
        assert gate.get(out.job_id).status == "pending"
        clock.advance(minutes=2)
        job = gate.get(out.job_id)
        assert job.status == "expired" and job.decision is not None
        assert job.decision.by == "gate:expiry" and not job.decision.granted
        with pytest.raises(JobExpired):
            gate.decide(out.job_id, True, by="cli:alice")


async def test_wait_times_out_and_leaves_the_job_pending(gate: Gate) -> None:
    out = gate.submit(WRITE)
    assert out.job_id is not None
    assert await gate.wait(out.job_id, timeout=0.2) is None
    assert gate.get(out.job_id).status == "pending"


async def test_wait_sees_a_decision_made_by_another_gate(gate: Gate, db_path: Path) -> None:
    out = gate.submit(WRITE)
    assert out.job_id is not None
    job_id = out.job_id

    async def answer_later() -> None:
        await asyncio.sleep(0.2)
        with Gate(db_path, GatePolicy()) as other:
            other.decide(job_id, False, by="slack:U123", note="no")

    waiter = asyncio.create_task(gate.wait(job_id, timeout=10))
    await answer_later()
    decision = await asyncio.wait_for(waiter, timeout=10)
    assert decision is not None and decision.status == "denied" and decision.by == "slack:U123"


async def test_wait_sees_a_grant_from_the_cli_in_another_process() -> None:
    db = duckflow_home() / "gate.db"  # the default place `duckflow approvals` uses
    with Gate(db, GatePolicy()) as gate:
        out = gate.submit(WRITE, intent="fix it")
        assert out.decision == "pending" and out.job_id is not None
        waiter = asyncio.create_task(gate.wait(out.job_id, timeout=60))
        await asyncio.sleep(0.1)
        assert not waiter.done()
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "duckflow", "approvals", "grant", out.job_id[:8],
            "--by", "cli:tester", "--note", "ok from a shell",
            env=dict(os.environ), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        stdout, stderr = await asyncio.wait_for(proc.communicate(), timeout=60)
        assert proc.returncode == 0, stderr.decode()
        assert f"Granted {out.job_id[:8]}" in stdout.decode()
        decision = await asyncio.wait_for(waiter, timeout=60)
        assert decision is not None and decision.granted
        assert decision.by == "cli:tester" and decision.note == "ok from a shell"
