"""An Operation for a workspace tool call with the guard's verdicts folded in (refusals, flags)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from duckflow.gate.operation import Operation, operation_for_tool, tool_paths

if TYPE_CHECKING:
    from duckflow.workspace.guard import WorkspaceGuard

# guard codes that mean "this path leads out of the workspace"
OUTSIDE_CODES = frozenset({"outside_workspace", "dotdot_escape", "home", "drive_letter",
                           "symlink_outside"})
_GUARD_OP: dict[str, str] = {
    "read": "read", "list": "read", "search": "read",
    "write": "write", "edit": "write", "create": "write", "mkdir": "write",
    "delete": "delete",
}


def guarded_operation(
    tool: str,
    arguments: Mapping[str, Any],
    guard: WorkspaceGuard,
    *,
    task_type: str | None = None,
    boxed: bool = False,
    **fields: Any,
) -> Operation:
    """`operation_for_tool` plus the workspace guard's answer for every path of the call.

    A refused path sets `refused` (the gate then refuses without asking anyone) and, when it
    leads outside the workspace, `outside_workspace`; a path the guard allows only with
    approval (a dangerous extension in "approve" mode) sets `dangerous_extension`, which is
    hard-required. A rename checks its source for delete and its destination for write.

    Every path is also recorded as the guard resolved it (`targets`, through symlinks), so
    scope and risk judge where a write lands, not only its name. A command is judged by
    `gate.commands.command_hazard` (the shell tool's own analysis plus a parsed look): a
    destructive one is hard-required. `extra` binds the job to the workspace root and to the
    content every path has now (gate/binding.py): what is approved is what runs.
    """
    from duckflow.gate.binding import bind
    from duckflow.gate.callcheck import workspace_call_check
    from duckflow.gate.commands import command_hazard, programs_run

    op = operation_for_tool(tool, arguments, task_type=task_type, **fields)
    refused: list[str] = []
    targets: list[str] = list(op.targets)
    outside = op.outside_workspace
    dangerous = op.dangerous_extension
    destructive = op.destructive
    call_check = False
    if op.command and op.kind in ("execute", "test"):
        if destructive is None:
            destructive = command_hazard(op.command)
            call_check = destructive is not None and workspace_call_check(guard, op.command)
            if call_check:
                destructive = None  # judged by its module's text below (gate/callcheck.py)
        for script in programs_run(op.command):  # `./run.sh`, `sh run.txt -> run.sh`
            verdict = guard.check(script, "execute")
            if verdict.allowed and verdict.needs_approval and verdict.code == "dangerous_extension":
                dangerous = True
        if destructive is None:  # `sh notes.txt`, `python3 clean.py`: the file's text is judged
            destructive = _script_hazard(guard, op.command, boxed)
            if destructive is None and call_check:
                destructive = ""  # judged here, and safe: not judged again as inline code
    raw = tool_paths(arguments) if "paths" not in fields else list(op.paths)
    for i, path in enumerate(raw):
        if op.kind in ("rename", "move"):
            guard_op = "delete" if i == 0 else "write"
        else:
            guard_op = _GUARD_OP.get(op.kind, "")
        if not guard_op:
            continue
        verdict = guard.check(path, guard_op)  # type: ignore[arg-type]
        if verdict.code in OUTSIDE_CODES:
            outside = True
        if not verdict.allowed:
            refused.append(f"{path}: {verdict.reason} [{verdict.code}]")
        elif verdict.needs_approval and verdict.code == "dangerous_extension":
            dangerous = True
        if verdict.resolved is not None:
            try:
                rel = verdict.resolved.relative_to(guard.root).as_posix()
            except ValueError:
                outside = True
            else:
                targets.append(rel or ".")
    return Operation(
        kind=op.kind, tool=op.tool, paths=op.paths, size=op.size, command=op.command,
        task_type=op.task_type, diff=op.diff, outside_workspace=outside,
        dangerous_extension=dangerous, sensitive=op.sensitive or holds_secret(arguments),
        cost_estimate=op.cost_estimate,
        refused="; ".join(refused) if refused else op.refused,
        extra={**op.extra, **bind(guard, raw if not refused else [])},
        targets=tuple(t for t in dict.fromkeys(targets) if t not in op.paths),
        destructive=destructive,
    )


_SCRIPT_LIMIT = 512_000


def _script_hazard(guard: WorkspaceGuard, command: str, boxed: bool = False) -> str | None:
    """Why a workspace file the command runs is destructive (gate/scripts.py judges its text):
    a script (`sh x`, `./x`, `python3 x.py`) or a build file (`make` → Makefile, `npm test` →
    package.json)."""
    from duckflow.gate.scripts import (
        build_file_hazard,
        build_files_run,
        script_hazard,
        scripts_run,
    )

    for language, path in scripts_run(command):
        if language == "variable":
            return f"`{path}`: {script_hazard(language, '')}"
        text = _read_text(guard, path)
        if text is None:
            continue
        why = script_hazard(language, text, boxed=boxed) if text != _TOO_LARGE else "it is too large for the gate to read"
        if why is not None:
            return f"`{path}`: {why}"
    for kind, path, targets in build_files_run(command):
        text = _read_text(guard, path)
        if text is None:
            continue
        why = build_file_hazard(kind, text, targets) if text != _TOO_LARGE else "it is too large for the gate to read"
        if why is not None:
            return f"`{path}`: {why}"
    return None


_TOO_LARGE = "\0too large\0"


def _read_text(guard: WorkspaceGuard, path: str) -> str | None:
    """A workspace file's text through the guard (None: absent, a folder, outside, unreadable)."""
    from duckflow.workspace.fsops import read_bytes
    from duckflow.workspace.guard import PathRefused

    try:
        with guard.locate(path, "read") as target:
            if target.dir_fd is None or not target.exists or target.is_dir:
                return None  # nothing there to run (or not a file): the command fails by itself
            data = read_bytes(target.dir_fd, target.name, _SCRIPT_LIMIT)
    except (PathRefused, OSError):
        return None  # outside or unreadable: the guard and the sandbox answer for it
    except ValueError:
        return _TOO_LARGE
    return data.decode("utf-8", "replace")


def holds_secret(arguments: Mapping[str, Any]) -> bool:
    """A write or edit whose content holds a secret (an API key, a token, a private key, as the
    sanitizer finds them): high risk, and a person must decide, never auto-approved as low."""
    content = arguments.get("content")
    if not isinstance(content, str) or not content:
        return False
    from duckflow.security.sanitizer import default_sanitizer

    return any(c.category == "SECRET" for c in default_sanitizer().scan(content))
