"""The guard's verdicts folded into operations: refusals, outside paths, dangerous extensions."""

from __future__ import annotations

from pathlib import Path

import pytest

from duckflow.config import WorkspaceConfig
from duckflow.gate import AutoApproveScope, Gate, guarded_operation
from duckflow.workspace.guard import WorkspaceGuard

WIDEST = AutoApproveScope(task_types=("*",), tools=("*",), paths=("*",), deny_operations=(),
                          max_risk="high")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "docs").mkdir(parents=True)
    (ws / "docs" / "a.md").write_text("hello\n")
    (ws / ".git").mkdir()
    return ws


def test_plain_write_inside_the_workspace_has_no_flags(root: Path) -> None:
    op = guarded_operation("write_file", {"path": "docs/b.md", "content": "x"}, WorkspaceGuard(root))
    assert op.refused is None and not op.outside_workspace and not op.dangerous_extension


@pytest.mark.parametrize(
    ("args", "code", "outside"),
    [
        ({"path": "../escape.txt", "content": "x"}, "dotdot_escape", True),
        ({"path": "/etc/passwd", "content": "x"}, "outside_workspace", True),
        ({"path": ".git/config", "content": "x"}, "protected", False),
        ({"path": "tools/run.sh", "content": "x"}, "dangerous_extension", False),
    ],
)
def test_guard_refusals_become_gate_refusals(root: Path, gate: Gate, args: dict[str, str],
                                             code: str, outside: bool) -> None:
    op = guarded_operation("write_file", args, WorkspaceGuard(root))
    assert op.refused is not None and f"[{code}]" in op.refused
    assert op.outside_workspace is outside
    gate.autoapprove.on(WIDEST, ttl_min=5, by="t")
    out = gate.submit(op)
    assert out.decision == "refused" and code in out.reason


def test_dangerous_extension_in_approve_mode_is_hard_required(root: Path, gate: Gate) -> None:
    guard = WorkspaceGuard(root, WorkspaceConfig(dangerous_extensions_mode="approve"))
    op = guarded_operation("write_file", {"path": "tools/run.sh", "content": "echo hi"}, guard)
    assert op.refused is None and op.dangerous_extension
    gate.autoapprove.on(WIDEST, ttl_min=5, by="t")
    out = gate.submit(op)
    assert out.decision == "pending"
    assert out.request is not None and "dangerous_extension" in out.request.hard_required


def test_move_checks_source_for_delete_and_destination_for_write(root: Path) -> None:
    guard = WorkspaceGuard(root)
    ok = guarded_operation("move_path", {"src": "docs/a.md", "dst": "docs/c.md"}, guard)
    assert ok.kind == "rename" and ok.refused is None
    bad = guarded_operation("move_path", {"src": "docs/a.md", "dst": ".git/a.md"}, guard)
    assert bad.refused is not None and ".git/a.md" in bad.refused


@pytest.mark.parametrize("content", [
    'OPENAI_API_KEY = "sk-proj-abcdefghij1234567890ABCDEFGHIJklmnopqrstuv"\n',
    "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n",
])
def test_writing_a_secret_into_a_file_is_high_risk_and_never_auto_approved(root: Path, gate: Gate,
                                                                         content: str) -> None:
    op = guarded_operation("write_file", {"path": "docs/settings.md", "content": content}, WorkspaceGuard(root))
    assert op.sensitive
    gate.autoapprove.on(WIDEST, ttl_min=5, by="t")  # even with every auto-approval on, a person decides
    out = gate.submit(op, intent="store the key")
    assert out.decision == "pending" and out.request is not None
    assert out.request.risk == "high" and "send_sensitive" in out.request.hard_required


def test_a_write_without_a_secret_stays_low(root: Path) -> None:
    op = guarded_operation("write_file", {"path": "docs/b.md", "content": 'api_key = os.environ["KEY"]\n'},
                           WorkspaceGuard(root))
    assert not op.sensitive
