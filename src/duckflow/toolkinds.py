"""What each workspace tool is, said once: its kind. The protocols, gate, plan, policy and loop read it.

`KINDS` is the one table (a new tool gets one line here and its function in tools.py; the
tool itself carries the kind as `Tool.kind`). Every other view derives from it: which tools
only read (`READ_TOOLS`), which change the workspace or run something (`MUTATING`, each one
passes the gate), the dialog policy's class of an operation (`policy_class`) and the plan's
action kind (`plan_kind`). An unknown tool is `execute`: the safe assumption, it may do anything.
"""

from __future__ import annotations

READ_KINDS = frozenset({"read", "list", "search"})  # a tool of these kinds only reads: no approval
KINDS: dict[str, str] = {
    "read_file": "read",
    "list_files": "list",
    "search_code": "search",
    "write_file": "write",
    "edit_file": "edit",
    "create_directory": "mkdir",
    "delete_path": "delete",
    "move_path": "rename",
    "execute_shell": "execute",
    "run_tests": "test",
}
READ_TOOLS = frozenset(name for name, kind in KINDS.items() if kind in READ_KINDS)
MUTATING = frozenset(KINDS) - READ_TOOLS
WRITE_TOOLS = frozenset(name for name, kind in KINDS.items() if kind in ("write", "edit"))
RUN_TOOLS = frozenset(name for name, kind in KINDS.items() if kind in ("execute", "test"))
UNDOABLE_TOOLS = frozenset(name for name, kind in KINDS.items()  # a checkpoint takes their files back
                           if kind in ("write", "edit", "mkdir", "delete", "rename"))

_POLICY = {"write": "write", "edit": "write", "mkdir": "write", "rename": "write", "delete": "delete",
           "execute": "execute", "test": "execute", "read": "read", "list": "read", "search": "read"}
_PLAN = {"write": "create", "mkdir": "create", "edit": "edit", "rename": "edit", "delete": "delete",
         "execute": "run", "test": "test", "read": "read", "list": "read", "search": "read"}


def kind_of(tool: str) -> str:
    return KINDS.get(tool, "execute")


def policy_class(tool: str) -> str:
    """read | write | delete | execute: what the dialog policy decides on (write, delete and
    execute pass the gate)."""
    return _POLICY[kind_of(tool)]


def plan_kind(tool: str) -> str:
    """The kind of the plan action a call stands for (read, create, edit, delete, run, test)."""
    return _PLAN.get(KINDS.get(tool, ""), "other")
