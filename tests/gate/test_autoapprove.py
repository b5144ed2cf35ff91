"""Auto-approve: scope, TTL, the instant off switch, and hard-required operations that never pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from duckflow.gate import AutoApproveScope, Gate, GateError, GatePolicy, Operation
from tests.helpers import FakeClock

WIDEST = AutoApproveScope(task_types=("*",), tools=("*",), paths=("*",), deny_operations=(),
                          max_risk="high")
DOCS = AutoApproveScope(task_types=("design", "review"), tools=("*",), paths=("docs/",),
                        deny_operations=("delete", "rename", "push_public"), max_risk="medium")


def doc_write(name: str = "docs/guide.md", task_type: str | None = "design") -> Operation:
    return Operation("write", tool="write_file", paths=(name,), size=120, task_type=task_type)


def test_approval_is_required_by_default(gate: Gate) -> None:
    out = gate.submit(doc_write(), intent="write the guide")
    assert out.decision == "pending"
    assert out.job_id is not None
    assert "auto-approve is off" in out.reason
    assert [j.job_id for j in gate.pending()] == [out.job_id]


def test_scope_auto_approves_and_records_the_scope_id(gate: Gate) -> None:
    active = gate.autoapprove.on(DOCS, ttl_min=30, by="cli:alice")
    out = gate.submit(doc_write(), intent="write the guide")
    assert out.decision == "auto_approved"
    assert out.job_id is not None
    job = gate.get(out.job_id)
    assert job.status == "auto_approved"
    assert job.decision is not None and job.decision.by == f"auto:scope#{active.id}"
    assert job.decision.granted
    assert gate.pending() == []


@pytest.mark.parametrize(
    ("op", "why"),
    [
        (doc_write("src/app.py"), "path src/app.py is outside"),
        (doc_write("docsx/a.md"), "path docsx/a.md is outside"),
        (doc_write(task_type="feature"), "task type feature"),
        (doc_write(task_type=None), "task type (none)"),
        (Operation("execute", tool="execute_shell", command="make docs", task_type="design"),
         "no path"),
        (Operation("edit", tool="edit_file", paths=("docs/.env",), task_type="design"),
         "risk high is above"),
    ],
)
def test_scope_does_not_cover_what_is_outside_it(gate: Gate, op: Operation, why: str) -> None:
    gate.autoapprove.on(DOCS, ttl_min=30, by="cli:alice")
    out = gate.submit(op)
    assert out.decision == "pending"
    assert why in out.reason


def test_tool_list_limits_the_scope(gate: Gate) -> None:
    gate.autoapprove.on(AutoApproveScope(task_types=("*",), tools=("write_file",), paths=("*",),
                                         deny_operations=()), ttl_min=10, by="t")
    assert gate.submit(doc_write()).decision == "auto_approved"
    edit = Operation("edit", tool="edit_file", paths=("docs/guide.md",), task_type="design")
    out = gate.submit(edit)
    assert out.decision == "pending" and "tool edit_file" in out.reason


def test_ttl_expires_between_two_operations(gate: Gate, clock: FakeClock) -> None:
    gate.autoapprove.on(DOCS, ttl_min=30, by="cli:alice")
    clock.advance(minutes=29, seconds=59)
    first = gate.submit(doc_write("docs/one.md"))
    assert first.decision == "auto_approved"
    clock.advance(seconds=2)  # the TTL ends between the two operations
    second = gate.submit(doc_write("docs/two.md"))
    assert second.decision == "pending"
    assert gate.autoapprove.active() is None
    assert [j.job_id for j in gate.pending()] == [second.job_id]


def test_off_switch_from_another_instance_takes_effect_before_next_operation(
    gate: Gate, db_path: Path, clock: FakeClock
) -> None:
    gate.autoapprove.on(DOCS, ttl_min=60, by="cli:alice")
    assert gate.submit(doc_write("docs/one.md")).decision == "auto_approved"
    other = Gate(db_path, GatePolicy(), clock=clock)  # e.g. `duckflow autoapprove off` elsewhere
    try:
        assert other.autoapprove.off(by="cli:bob") == 1
    finally:
        other.close()
    out = gate.submit(doc_write("docs/two.md"))  # no time passes: the switch alone decides
    assert out.decision == "pending"
    assert out.job_id is not None
    assert gate.get(out.job_id).decision is None


def test_turning_on_a_new_scope_replaces_the_old_one(gate: Gate) -> None:
    first = gate.autoapprove.on(DOCS, ttl_min=60, by="a")
    second = gate.autoapprove.on(WIDEST, ttl_min=5, by="b")
    active = gate.autoapprove.active()
    assert active is not None and active.id == second.id != first.id
    assert gate.autoapprove.off(by="c") == 1


def test_ttl_must_be_positive(gate: Gate) -> None:
    with pytest.raises(GateError, match="TTL"):
        gate.autoapprove.on(DOCS, ttl_min=0, by="a")


HARD = [
    ("delete", Operation("delete", tool="delete_path", paths=("docs/a.md",), task_type="design")),
    ("rename", Operation("rename", tool="move_path", paths=("docs/a.md", "docs/b.md"))),
    ("rename", Operation("move", tool="move_path", paths=("docs/a.md", "docs/c.md"))),
    ("send_sensitive", Operation("send_sensitive", tool="http_post", task_type="design")),
    ("send_sensitive", Operation("network", tool="fetch", sensitive=True)),
    ("push_public", Operation("push_public", command="git push origin main")),
    ("cost_over_limit", Operation("write", paths=("docs/a.md",), cost_estimate=5.0)),
    ("cost_over_limit", Operation("cost_over_limit", tool="llm_call")),
    ("outside_workspace", Operation("write", paths=("../etc/hosts",), outside_workspace=True)),
    ("outside_workspace", Operation("read", paths=("../secrets.txt",), outside_workspace=True)),
    ("dangerous_extension", Operation("write", paths=("docs/run.sh",), dangerous_extension=True)),
    ("broad_overwrite", Operation("write", paths=tuple(f"docs/{i}.md" for i in range(12)))),
    ("execute", Operation("execute", tool="execute_shell", command="make")),  # added by config
]


@pytest.mark.parametrize(("name", "op"), HARD, ids=[f"{n}-{o.kind}" for n, o in HARD])
def test_hard_required_never_auto_approved_under_widest_scope(
    db_path: Path, clock: FakeClock, name: str, op: Operation
) -> None:
    policy = GatePolicy(cost_limit=1.0, hard_required=frozenset({"execute"}), require_approval=False)
    with Gate(db_path, policy, clock=clock) as gate:
        gate.autoapprove.on(WIDEST, ttl_min=60, by="cli:alice")
        control = gate.submit(Operation("write", tool="write_file", paths=("src/x.py",)))
        assert control.decision == "auto_approved"  # the scope really is wide open
        out = gate.submit(op, intent="try anyway")
        assert out.decision == "pending", out.reason
        assert out.request is not None and name in out.request.hard_required
        assert "never auto-approved" in out.reason
        assert out.job_id is not None and gate.get(out.job_id).status == "pending"


def test_configuration_cannot_remove_builtin_hard_required() -> None:
    policy = GatePolicy(hard_required=frozenset())
    assert {"delete", "rename", "push_public", "outside_workspace"} <= policy.hard_required


def test_require_approval_false_lets_low_risk_through_but_not_high(db_path: Path, clock: FakeClock) -> None:
    with Gate(db_path, GatePolicy(require_approval=False), clock=clock) as gate:
        low = gate.submit(Operation("write", paths=("src/a.py",)))
        assert low.decision == "auto_approved"
        assert low.job_id is not None
        decision = gate.get(low.job_id).decision
        assert decision is not None and decision.by == "policy:no-approval-required"
        high = gate.submit(Operation("edit", paths=(".github/workflows/ci.yml",)))
        assert high.decision == "pending"


def test_workspace_scope_covers_ordinary_work_but_not_deletes_or_high_risk(gate: Gate) -> None:
    gate.autoapprove.on(AutoApproveScope.workspace(), ttl_min=30, by="run:auto-approve-workspace")
    assert gate.submit(Operation("write", tool="write_file", paths=("src/a.py",))).decision == "auto_approved"
    # a caller of the gate without a box (no session context) never gets code run unasked
    tests = gate.submit(Operation("execute", tool="run_tests", command="pytest"))
    assert tests.decision == "pending" and tests.request is not None
    assert gate.submit(Operation("execute", tool="execute_shell", command="git status")).decision == "auto_approved"
    assert gate.submit(Operation("delete", paths=("src/a.py",))).decision == "pending"
    assert gate.submit(Operation("edit", paths=(".github/workflows/ci.yml",))).decision == "pending"
