"""The gate's policy: hard-required operations, refusals, risk rules and auto-approve defaults."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from duckflow.gate.operation import (
    BUILTIN_HARD_REQUIRED,
    COMMAND_KINDS,
    UNDOABLE_KINDS,
    WRITE_KINDS,
    Operation,
    Risk,
)
from duckflow.gate.risk import RiskRules, load_rules

if TYPE_CHECKING:
    from duckflow.config import GateConfig

_RENAME_KINDS = frozenset({"rename", "move"})


@dataclass(frozen=True)
class GatePolicy:
    """Everything the gate decides with besides the database (built from `GateConfig`).

    `hard_required` always contains the built-in set; configuration can only add to it.
    """

    require_approval: bool = True
    hard_required: frozenset[str] = frozenset(BUILTIN_HARD_REQUIRED)
    refuse_operations: frozenset[str] = frozenset()
    cost_limit: float | None = None
    broad_overwrite_files: int = 10
    pending_expiry_min: int | None = None
    rules: RiskRules = field(default_factory=load_rules)
    auto_approve_ttl_min: int = 60
    auto_approve_task_types: tuple[str, ...] = ("design", "review")
    auto_approve_tools: tuple[str, ...] = ("*",)
    auto_approve_paths: tuple[str, ...] = ("docs/",)
    auto_approve_deny_operations: tuple[str, ...] = ("delete", "rename", "push_public")
    auto_approve_max_risk: Risk = "medium"

    def __post_init__(self) -> None:
        object.__setattr__(self, "hard_required",
                           frozenset(self.hard_required) | frozenset(BUILTIN_HARD_REQUIRED))

    @classmethod
    def from_config(cls, cfg: GateConfig) -> GatePolicy:
        extra = [cfg.risk_rules_file] if cfg.risk_rules_file else []
        return cls(
            require_approval=cfg.require_approval,
            hard_required=frozenset(cfg.hard_required),
            refuse_operations=frozenset(cfg.refuse_operations),
            cost_limit=cfg.cost_limit,
            broad_overwrite_files=cfg.broad_overwrite_files,
            pending_expiry_min=cfg.pending_expiry_min,
            rules=load_rules(extra),
            auto_approve_ttl_min=cfg.auto_approve.ttl_min,
            auto_approve_task_types=tuple(cfg.auto_approve.task_types),
            auto_approve_tools=tuple(cfg.auto_approve.tools),
            auto_approve_paths=tuple(cfg.auto_approve.paths),
            auto_approve_deny_operations=tuple(cfg.auto_approve.deny_operations),
            auto_approve_max_risk=cfg.auto_approve.max_risk,
        )

    @classmethod
    def load(cls) -> GatePolicy:
        """The policy from the user's configuration (`load_config().gate`)."""
        from duckflow.config import load_config

        return cls.from_config(load_config().gate)

    def over_cost_limit(self, op: Operation) -> bool:
        return (self.cost_limit is not None and op.cost_estimate is not None
                and op.cost_estimate > self.cost_limit)

    def hard_reasons(self, op: Operation) -> tuple[str, ...]:
        """Why a person must decide this operation, whatever auto-approve says ([] = no reason)."""
        names = operation_names(op, self)
        return tuple(sorted(n for n in names if n in self.hard_required))

    def refusal(self, op: Operation) -> str | None:
        """Why the operation is refused outright, or None."""
        if op.refused:
            return f"refused by the workspace guard: {op.refused}"
        hit = sorted(operation_names(op, self) & self.refuse_operations)
        if hit:
            return f"refused by configuration (gate.refuse_operations: {', '.join(hit)})"
        return None


def operation_names(op: Operation, policy: GatePolicy) -> frozenset[str]:
    """Every name a hard-required / deny / refuse list can use for this operation.

    The kind (`move` also counts as `rename`), the tool name, and the conditions
    outside_workspace, dangerous_extension, send_sensitive, cost_over_limit, broad_overwrite,
    destructive (a command that deletes, moves or overwrites: gate/commands.py) and
    irreversible (a kind no checkpoint undoes and that is not a command judged on its own).
    """
    names = {op.kind}
    if op.tool:
        names.add(op.tool)
    if op.kind in _RENAME_KINDS:
        names |= _RENAME_KINDS
    if op.sensitive:
        names.add("send_sensitive")
    if op.outside_workspace:
        names.add("outside_workspace")
    if op.dangerous_extension:
        names.add("dangerous_extension")
    if policy.over_cost_limit(op):
        names.add("cost_over_limit")
    if op.kind in WRITE_KINDS | {"delete"} and op.files >= max(2, policy.broad_overwrite_files):
        names.add("broad_overwrite")
    if op.destructive:
        names.add("destructive")
    if op.kind not in UNDOABLE_KINDS | COMMAND_KINDS:
        names.add("irreversible")
    return frozenset(names)
