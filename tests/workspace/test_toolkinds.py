"""A tool says once what it is: every workspace tool carries its kind, and the gate, the policy,
the plan and the loop read that one table (a new tool cannot be forgotten in one of them)."""

from __future__ import annotations

import ast
from pathlib import Path

from duckflow.companion.actions import ActionRunner
from duckflow.companion.plan import specs_for_calls
from duckflow.gate import guarded_operation
from duckflow.llm.types import ToolCall
from duckflow.toolkinds import KINDS, READ_TOOLS
from duckflow.workspace.guard import WorkspaceGuard
from duckflow.workspace.tools import workspace_tools

SRC = Path(__file__).resolve().parents[2] / "src" / "duckflow"


def test_every_workspace_tool_is_in_the_one_table_and_carries_its_kind(tmp_path: Path) -> None:
    tools = workspace_tools(tmp_path)
    assert {t.name for t in tools} == set(KINDS)
    for t in tools:
        assert t.kind == KINDS[t.name]
        assert t.needs_approval == (t.name not in READ_TOOLS)
        assert t.exclusive == t.needs_approval  # a tool that changes things never runs beside another


def test_the_gate_the_policy_and_the_plan_agree_with_the_table(tmp_path: Path) -> None:
    guard = WorkspaceGuard(tmp_path)
    for name, kind in KINDS.items():
        args = {"path": "a.txt", "content": "x", "command": "true", "src": "a.txt", "dst": "b.txt"}
        op = guarded_operation(name, args, guard)
        assert op.kind == kind, name
        klass = ActionRunner.op_class(None, name)  # type: ignore[arg-type]  (reads no state)
        assert (klass == "read") == (name in READ_TOOLS), name
        spec = specs_for_calls([ToolCall(name=name, arguments=args, id="1")])[0]
        assert (spec.kind == "read") == (name in READ_TOOLS), name
    # an unknown tool is judged as the riskiest kind
    assert guarded_operation("mystery_tool", {}, guard).kind == "execute"
    assert ActionRunner.op_class(None, "mystery_tool") == "execute"  # type: ignore[arg-type]


def test_no_other_table_of_tool_names_is_written_in_the_source() -> None:
    """The tool names appear as a set or dict literal of two or more names only in toolkinds.py."""
    names = set(KINDS)
    found = []
    for path in SRC.rglob("*.py"):
        if path.name == "toolkinds.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Set | ast.Dict):
                keys = node.elts if isinstance(node, ast.Set) else [k for k in node.keys if k is not None]
                listed = {k.value for k in keys if isinstance(k, ast.Constant) and k.value in names}
                if len(listed) >= 3:
                    found.append(f"{path.relative_to(SRC)}:{node.lineno} {sorted(listed)}")
    assert found == [], found
