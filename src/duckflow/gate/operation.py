"""What an action is, for the gate: `Operation`, its kinds, `Risk`, and which ops need the gate."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from duckflow.toolkinds import KINDS, kind_of

Risk = Literal["low", "medium", "high"]
RISK_ORDER: dict[str, int] = {"low": 0, "medium": 1, "high": 2}

# Kinds the gate knows. Unknown kinds are accepted and treated as mutating (they need the gate).
READ_ONLY_KINDS = frozenset({"read", "list", "search"})
WRITE_KINDS = frozenset({"write", "edit", "create", "mkdir"})
KNOWN_KINDS = READ_ONLY_KINDS | WRITE_KINDS | frozenset(
    {"delete", "rename", "move", "execute", "test", "send_sensitive", "push_public", "network",
     "cost_over_limit"}
)

# Seed 003 §6.4 / §10.2 plus the guard's flag: never auto-approved, whatever a scope says.
# `destructive`: a command that deletes, moves, overwrites or rewrites history (gate/commands.py);
# `irreversible`: a kind whose effect no checkpoint can undo (network, unknown kinds, ...).
BUILTIN_HARD_REQUIRED = (
    "delete",
    "rename",
    "send_sensitive",
    "push_public",
    "cost_over_limit",
    "outside_workspace",
    "dangerous_extension",
    "broad_overwrite",
    "destructive",
    "irreversible",
)
# Kinds whose effect a checkpoint undoes (files), or whose command is judged one by one.
UNDOABLE_KINDS = WRITE_KINDS | frozenset({"delete", "rename", "move"})
COMMAND_KINDS = frozenset({"execute", "test"})

# The workspace tools and the operation kind each one performs (said once, in workspace/toolkinds.py).
TOOL_KINDS: dict[str, str] = KINDS

_PATH_KEYS = ("path", "src", "source", "dst", "dest", "destination", "target", "old_path", "new_path")


def max_risk(*risks: Risk) -> Risk:
    """The highest of the given risks (low when none)."""
    best: Risk = "low"
    for r in risks:
        if RISK_ORDER[r] > RISK_ORDER[best]:
            best = r
    return best


def normalize_path(path: str) -> str:
    """Workspace-relative POSIX form: `./docs//a.md` -> `docs/a.md`; `.` for the root."""
    p = path.replace("\\", "/").strip()
    if not p:
        return "."
    norm = posixpath.normpath(p)
    return norm[2:] if norm.startswith("./") else norm


@dataclass(frozen=True)
class Operation:
    """One action a model wants to take, described for the gate.

    `paths` are relative to the workspace. `size` is the number of bytes written (or read).
    `outside_workspace` and `dangerous_extension` are set from the guard's verdict;
    `refused` carries the guard's reason when it refused the operation outright.
    `cost_estimate` is in US dollars when known (seed 003 §6.3).
    `targets` are the same paths as the guard resolved them (through symlinks), relative to
    the workspace: scope and risk are judged on both (`all_paths`). `destructive` says why a
    command cannot be undone (gate/commands.py), or None. `allow` says why a command is not
    on the auto-approve list (gate/allowlist.py): "" when it is, None when not judged yet.
    """

    kind: str
    tool: str = ""
    paths: tuple[str, ...] = ()
    size: int | None = None
    command: str | None = None
    task_type: str | None = None
    diff: str | None = None
    outside_workspace: bool = False
    dangerous_extension: bool = False
    sensitive: bool = False
    cost_estimate: float | None = None
    refused: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    targets: tuple[str, ...] = ()
    destructive: str | None = None
    allow: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", self.kind.strip().lower())
        object.__setattr__(self, "paths", tuple(normalize_path(p) for p in self.paths))
        object.__setattr__(self, "targets", tuple(normalize_path(p) for p in self.targets))
        object.__setattr__(self, "extra", dict(self.extra))

    @property
    def all_paths(self) -> tuple[str, ...]:
        """The paths as written and as resolved (a symlink's target), each once."""
        return tuple(dict.fromkeys(self.paths + self.targets))

    @property
    def read_only(self) -> bool:
        return self.kind in READ_ONLY_KINDS

    @property
    def files(self) -> int:
        """How many files or folders the operation touches (its scope)."""
        return len(self.paths)

    def describe(self) -> str:
        """One short line: `write docs/a.md (1.2 KB)`, `execute: pytest -q`."""
        if self.command:
            text = f"{self.kind}: {self.command}"
        elif self.paths:
            shown = ", ".join(self.paths[:3]) + (f" (+{len(self.paths) - 3} more)" if len(self.paths) > 3 else "")
            text = f"{self.kind} {shown}"
        else:
            text = self.kind + (f" via {self.tool}" if self.tool else "")
        if self.size is not None and self.kind in WRITE_KINDS:
            text += f" ({_human_size(self.size)})"
        return text[:200]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["paths"] = list(self.paths)
        data["targets"] = list(self.targets)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Operation:
        known = {f for f in cls.__dataclass_fields__}
        values = {k: v for k, v in data.items() if k in known}
        values["paths"] = tuple(values.get("paths") or ())
        values["targets"] = tuple(values.get("targets") or ())
        return cls(**values)


def _human_size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / (1024 * 1024):.1f} MB"


def requires_gate(op: Operation) -> bool:
    """Seed 001 §9 "Gate": write, delete and execute always pass the gate; reads need not.

    A read-only operation still needs the gate when it reaches outside the workspace or
    handles sensitive data.
    """
    if op.kind not in READ_ONLY_KINDS:
        return True
    return op.outside_workspace or op.sensitive or op.refused is not None


def operation_for_tool(
    tool: str,
    arguments: Mapping[str, Any],
    *,
    task_type: str | None = None,
    **fields: Any,
) -> Operation:
    """Describe a workspace tool call (`write_file(path=..., content=...)`) as an Operation.

    Unknown tools become kind `execute` (the safe assumption: it may do anything).
    Extra keyword fields (outside_workspace, dangerous_extension, diff, ...) are passed on.
    """
    kind = kind_of(tool)
    paths = tool_paths(arguments)
    size: int | None = None
    content = arguments.get("content")
    if isinstance(content, str):
        size = len(content.encode("utf-8"))
    command = fields.pop("command", None) or arguments.get("command") or arguments.get("cmd")
    if isinstance(command, list | tuple):
        command = " ".join(str(c) for c in command)
    return Operation(
        kind=fields.pop("kind", kind),
        tool=tool,
        paths=tuple(fields.pop("paths", paths)),
        size=fields.pop("size", size),
        command=str(command) if command else None,
        task_type=task_type,
        **fields,
    )


def tool_paths(arguments: Mapping[str, Any]) -> list[str]:
    """The paths a tool call names, as given (path, src/dst and friends, or a `paths` list)."""
    paths: list[str] = []
    for key in _PATH_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value:
            paths.append(value)
    many = arguments.get("paths")
    if isinstance(many, list | tuple):
        paths.extend(str(p) for p in many if p)
    return paths
