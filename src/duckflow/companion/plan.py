"""PlanTool and ActionSpec: the one way plans are made and their actions declared (seed 001 §12.1.1).

`propose(content)` stores a plan and returns its id; `set_action_specs(plan_id, specs)` says
what the plan will do, one ActionSpec per action. There is no fallback path: an unknown plan
id or an empty spec list is an error (the seed removed its silent fallbacks on purpose).
A plan is the contract of EXECUTION: status proposed → approved → executing → done | failed
| abandoned (a deviation needs a re-plan); each ActionSpec carries the call it stands for and
its own state (pending → running → done | failed | skipped | denied: the person said no).
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Any

from duckflow.errors import DuckflowError
from duckflow.toolkinds import plan_kind

ACTION_KINDS = ("read", "create", "edit", "delete", "run", "test", "implement", "other")
SPEC_STATES = ("pending", "running", "done", "failed", "skipped", "denied")


class PlanError(DuckflowError):
    """A plan operation was asked for something that does not exist or is empty."""


@dataclass
class ActionSpec:
    """One declared action of a plan: what kind, on which path, why; optional ones may be skipped.

    `call` is the tool call the action stands for (name, arguments) when the plan gave one;
    `state` is where it stands while the plan runs."""

    kind: str
    path: str
    description: str
    optional: bool = False
    call: dict[str, Any] | None = None
    state: str = "pending"

    def line(self) -> str:
        opt = " (optional)" if self.optional else ""
        return f"{self.kind} {self.path}: {self.description}{opt}"


@dataclass
class Plan:
    plan_id: str
    content: str
    created_at: float
    action_specs: list[ActionSpec] = field(default_factory=list)
    status: str = "proposed"  # proposed | approved | executing | done | failed | abandoned

    def pending(self) -> list[int]:
        """Indexes of the actions still to run."""
        return [i for i, a in enumerate(self.action_specs) if a.state in ("pending", "running")]

    @property
    def open(self) -> bool:
        """An approved plan with actions left: it drives EXECUTION."""
        return self.status in ("approved", "executing") and bool(self.pending())


def _target(arguments: dict[str, Any]) -> str:
    return str(arguments.get("path") or arguments.get("src") or arguments.get("command")
               or arguments.get("query") or "")


def specs_for_calls(calls: list[Any]) -> list[ActionSpec]:
    """One ActionSpec per call of a planning reply: reads (run at once) and the mutating calls
    (run in EXECUTION). A guessed call (`executable=False`) is optional and has no call to run."""
    specs = []
    for c in calls:
        kind = plan_kind(c.name)
        call = c.to_dict() if c.executable else None
        specs.append(ActionSpec(kind, _target(c.arguments), f"{c.name} proposed while planning",
                                optional=not c.executable, call=call))
    return specs


def spec_matches(spec: ActionSpec, call: Any) -> bool:
    """Whether `call` does what `spec` declares (same kind of action on the same target)."""
    kind = plan_kind(call.name)
    norm = str(_target(call.arguments)).strip().lstrip("./") or "."
    return kind == spec.kind and norm == (spec.path.strip().lstrip("./") or ".")


class PlanTool:
    """Keeps the plans of one session, in order."""

    def __init__(self) -> None:
        self._plans: dict[str, Plan] = {}
        self._ids = itertools.count(1)
        self.version = 0  # bumped on every change (the owner re-serialises only then)

    def propose(self, content: str) -> str:
        text = content.strip()
        if not text:
            raise PlanError("cannot propose an empty plan", hint="describe at least one step")
        plan_id = f"plan-{time.strftime('%Y%m%d')}-{next(self._ids):03d}"
        while plan_id in self._plans:
            plan_id = f"plan-{time.strftime('%Y%m%d')}-{next(self._ids):03d}"
        self._plans[plan_id] = Plan(plan_id, text, time.time())
        self.version += 1
        return plan_id

    def get(self, plan_id: str) -> Plan:
        try:
            return self._plans[plan_id]
        except KeyError:
            raise PlanError(f"no plan '{plan_id}'", hint="propose a plan first") from None

    def set_action_specs(self, plan_id: str, specs: list[ActionSpec]) -> None:
        plan = self.get(plan_id)
        if not specs:
            raise PlanError(f"plan '{plan_id}' needs at least one ActionSpec")
        for s in specs:
            if s.kind not in ACTION_KINDS:
                raise PlanError(
                    f"unknown action kind '{s.kind}'", hint=f"use one of {', '.join(ACTION_KINDS)}"
                )
        plan.action_specs = list(specs)
        self.version += 1

    def set_status(self, plan_id: str, status: str) -> None:
        self.get(plan_id).status = status
        self.version += 1

    def mark(self, plan_id: str, index: int, state: str) -> None:
        """Set one action's state (pending | running | done | failed | skipped)."""
        if state not in SPEC_STATES:
            raise PlanError(f"unknown action state '{state}'", hint=f"use one of {', '.join(SPEC_STATES)}")
        self.get(plan_id).action_specs[index].state = state
        self.version += 1

    def add_action(self, plan_id: str, spec: ActionSpec) -> int:
        """Append an action to a plan (one the model proposed after the plan was made); its index."""
        plan = self.get(plan_id)
        plan.action_specs.append(spec)
        self.version += 1
        return len(plan.action_specs) - 1

    def denied_calls(self) -> list[ActionSpec]:
        """Every action the person said no to, in all plans (a repeat of one is refused)."""
        return [a for p in self._plans.values() for a in p.action_specs if a.state == "denied"]

    def latest(self) -> Plan | None:
        return next(reversed(self._plans.values()), None) if self._plans else None

    def __len__(self) -> int:
        return len(self._plans)

    def to_dict(self) -> dict[str, Any]:
        return {
            pid: {
                "plan_id": p.plan_id, "content": p.content, "created_at": p.created_at,
                "status": p.status,
                "action_specs": [
                    {"kind": a.kind, "path": a.path, "description": a.description, "optional": a.optional,
                     "call": a.call, "state": a.state}
                    for a in p.action_specs
                ],
            }
            for pid, p in self._plans.items()
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PlanTool:
        tool = cls()
        for pid, p in data.items():
            specs = [ActionSpec(**s) for s in p.get("action_specs", [])]
            tool._plans[pid] = Plan(pid, p["content"], p["created_at"], specs, p.get("status", "proposed"))
        tool._ids = itertools.count(len(tool._plans) + 1)
        return tool
