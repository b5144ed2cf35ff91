"""Scoped, time-limited auto-approve (seed 003 §6.4) with an instant off switch kept in the database.

The state is read from the database on every check — nothing is cached between operations —
so `duckflow autoapprove off` in another process takes effect before the next operation.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from duckflow.gate.audit import AuditLog
from duckflow.gate.operation import COMMAND_KINDS, RISK_ORDER, Operation, Risk, normalize_path
from duckflow.gate.policy import GatePolicy, operation_names
from duckflow.gate.request import iso
from duckflow.gate.store import GateStore

ANY = "*"
MAX_TTL_MIN = 7 * 24 * 60


@dataclass(frozen=True)
class AutoApproveScope:
    """What an auto-approve covers. `*` in a list means "any"; an empty list matches nothing.

    paths are workspace-relative prefixes matched segment-wise (`docs` covers `docs/a.md`,
    not `docsx/`); `*` or `.` covers the whole workspace. An operation without paths (a
    command) is covered only by `*`. deny_operations names kinds/tools never covered.
    """

    task_types: tuple[str, ...] = ("design", "review")
    tools: tuple[str, ...] = (ANY,)
    paths: tuple[str, ...] = ("docs/",)
    deny_operations: tuple[str, ...] = ("delete", "rename", "push_public")
    max_risk: Risk = "medium"

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AutoApproveScope:
        return cls(
            task_types=tuple(data.get("task_types", ())),
            tools=tuple(data.get("tools", ())),
            paths=tuple(data.get("paths", ())),
            deny_operations=tuple(data.get("deny_operations", ())),
            max_risk=data.get("max_risk", "medium"),
        )

    @classmethod
    def defaults(cls, policy: GatePolicy) -> AutoApproveScope:
        """The configured default scope (seed 003 §10.2: design/review tasks, docs/ only)."""
        return cls(
            task_types=policy.auto_approve_task_types,
            tools=policy.auto_approve_tools,
            paths=policy.auto_approve_paths,
            deny_operations=policy.auto_approve_deny_operations,
            max_risk=policy.auto_approve_max_risk,
        )

    @classmethod
    def workspace(cls, *, max_risk: Risk = "medium") -> AutoApproveScope:
        """The whole workspace, any task type and tool (e.g. `duckflow run --auto-approve-workspace`).

        Delete, rename and public pushes stay excluded, and hard-required operations always wait.
        """
        return cls(task_types=(ANY,), tools=(ANY,), paths=(ANY,),
                   deny_operations=("delete", "rename", "push_public"), max_risk=max_risk)

    def miss(self, op: Operation, risk: Risk, policy: GatePolicy) -> str | None:
        """Why this scope does not cover the operation, or None when it does."""
        denied = sorted(operation_names(op, policy) & set(self.deny_operations))
        if denied:
            return f"the scope denies {', '.join(denied)}"
        if ANY not in self.task_types and (op.task_type or "") not in self.task_types:
            return f"task type {op.task_type or '(none)'} is not in the scope"
        if ANY not in self.tools and op.tool not in self.tools and op.kind not in self.tools:
            return f"tool {op.tool or op.kind} is not in the scope"
        if RISK_ORDER[risk] > RISK_ORDER[self.max_risk]:
            return f"risk {risk} is above the scope's limit ({self.max_risk})"
        whole = any(p in (ANY, ".", "") for p in self.paths)
        if not whole:
            if not op.paths:
                return "the operation has no path and the scope is limited to paths"
            # judged on the paths as written AND as resolved: a link docs/x -> ../.env is not docs/
            outside = [p for p in op.all_paths if not any(under(p, pre) for pre in self.paths)]
            if outside:
                via = "" if outside[0] in op.paths else " (where a symlink on the path leads)"
                return f"path {outside[0]}{via} is outside the scope's paths"
        if op.kind in COMMAND_KINDS and op.allow != "":
            why = op.allow or "it was not judged against the auto-approve list"
            return (f"{why} (under auto-approve, read-only commands run unasked, and scripts and "
                    "tests only inside a box)")
        return None


def under(path: str, prefix: str) -> bool:
    """True when `path` is `prefix` or inside it (segment-wise; both workspace-relative)."""
    pre = normalize_path(prefix).rstrip("/")
    p = normalize_path(path)
    if pre in ("", "."):
        return True
    if p.startswith("../") or p == "..":
        return False
    return p == pre or p.startswith(pre + "/")


@dataclass(frozen=True)
class ActiveScope:
    """An auto-approve that is switched on: its id (`scope#id`), scope and expiry."""

    id: int
    scope: AutoApproveScope
    created_at: float
    created_by: str
    expires_at: float

    @property
    def label(self) -> str:
        return f"scope#{self.id}"

    def to_dict(self, now: float | None = None) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id, "label": self.label, "scope": self.scope.to_dict(),
            "created_at": iso(self.created_at), "created_by": self.created_by,
            "expires_at": iso(self.expires_at), "expires_ts": self.expires_at,
        }
        if now is not None:
            data["minutes_left"] = max(0.0, round((self.expires_at - now) / 60, 1))
        return data


class AutoApprove:
    """Switch auto-approve on (a scope + TTL) and off; `active()` reads the database each time."""

    def __init__(self, store: GateStore, audit: AuditLog, clock: Callable[[], float]) -> None:
        self.store = store
        self.audit = audit
        self.clock = clock

    def on(self, scope: AutoApproveScope, *, ttl_min: float, by: str) -> ActiveScope:
        """Switch on a new scope for `ttl_min` minutes; any earlier scope is switched off."""
        if not (0 < ttl_min <= MAX_TTL_MIN):  # also refuses nan and inf
            from duckflow.gate.errors import GateError

            raise GateError(f"TTL must be more than 0 and at most {MAX_TTL_MIN} minutes (7 days), "
                            f"not {ttl_min}.", hint="pass --ttl MINUTES, e.g. --ttl 30")
        now = self.clock()
        expires = now + ttl_min * 60
        e = self.audit.entry(now, "autoapprove.on", None, by,
                             {"scope": scope.to_dict(), "ttl_min": ttl_min, "expires_at": iso(expires)})
        with self.store.tx() as c:
            c.execute("UPDATE autoapprove_scopes SET disabled_at = ?, disabled_by = ?"
                      " WHERE disabled_at IS NULL", (now, by))
            cur = c.execute(
                "INSERT INTO autoapprove_scopes (created_at, created_by, expires_at, scope)"
                " VALUES (?, ?, ?, ?)", (now, by, expires, json.dumps(scope.to_dict())))
            scope_id = int(cur.lastrowid or 0)
            e.data["scope_id"] = scope_id
            self.audit.store_row(c, e)
        self.audit.append_file(e)
        return ActiveScope(scope_id, scope, now, by, expires)

    def on_from_config(self, scope: AutoApproveScope, *, ttl_min: float) -> ActiveScope | None:
        """`gate.auto_approve.enabled`: switch `scope` on when none is in force, unless a person
        switched auto-approve off last (an `off` always wins until someone switches it on)."""
        if self.active() is not None:
            return None
        rows = self.store.query("SELECT disabled_by FROM autoapprove_scopes ORDER BY id DESC LIMIT 1")
        if rows and rows[0]["disabled_by"] not in (None, "config"):
            return None
        return self.on(scope, ttl_min=ttl_min, by="config")

    def off(self, *, by: str) -> int:
        """Switch every scope off at once; returns how many were on (0: nothing to do)."""
        now = self.clock()
        with self.store.tx() as c:
            rows = c.execute("SELECT id FROM autoapprove_scopes WHERE disabled_at IS NULL"
                             " AND expires_at > ?", (now,)).fetchall()
            c.execute("UPDATE autoapprove_scopes SET disabled_at = ?, disabled_by = ?"
                      " WHERE disabled_at IS NULL", (now, by))
            e = self.audit.entry(now, "autoapprove.off", None, by,
                                 {"scopes": [f"scope#{r['id']}" for r in rows]})
            self.audit.store_row(c, e)
        self.audit.append_file(e)
        return len(rows)

    def active(self, now: float | None = None) -> ActiveScope | None:
        """The scope in force right now (fresh from the database), or None."""
        t = self.clock() if now is None else now
        rows = self.store.query(
            "SELECT * FROM autoapprove_scopes WHERE disabled_at IS NULL AND expires_at > ?"
            " ORDER BY id DESC LIMIT 1", (t,))
        if not rows:
            return None
        r = rows[0]
        return ActiveScope(int(r["id"]), AutoApproveScope.from_dict(json.loads(r["scope"])),
                           float(r["created_at"]), str(r["created_by"]), float(r["expires_at"]))

    def last(self) -> dict[str, Any] | None:
        """The most recent scope, whatever its state (for `duckflow autoapprove status`)."""
        rows = self.store.query("SELECT * FROM autoapprove_scopes ORDER BY id DESC LIMIT 1")
        if not rows:
            return None
        r = rows[0]
        return {"id": r["id"], "label": f"scope#{r['id']}", "created_by": r["created_by"],
                "expires_at": iso(r["expires_at"]), "disabled_at": iso(r["disabled_at"]),
                "disabled_by": r["disabled_by"], "scope": json.loads(r["scope"])}
