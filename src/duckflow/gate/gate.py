"""The approval gate: turns an Operation into allowed / auto-approved / pending / refused, and keeps jobs."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from duckflow.gate.audit import AuditEntry, AuditLog
from duckflow.gate.autoapprove import AutoApprove, AutoApproveScope
from duckflow.gate.diff import cap_diff, visible
from duckflow.gate.errors import AlreadyDecided, JobExpired, UnknownJob
from duckflow.gate.operation import Operation, requires_gate
from duckflow.gate.policy import GatePolicy
from duckflow.gate.request import (
    ApprovalRequest,
    Decision,
    GateOutcome,
    Job,
    JobStatus,
    limit_lines,
)
from duckflow.gate.risk import Assessment
from duckflow.gate.store import GateStore

_UNDO = "`duckflow undo` restores the checkpoint taken before the change"
_ROLLBACK: dict[str, tuple[bool, str]] = {
    "write": (True, _UNDO), "edit": (True, _UNDO), "create": (True, _UNDO),
    "mkdir": (True, _UNDO), "delete": (True, _UNDO), "rename": (True, _UNDO),
    "move": (True, _UNDO),
    "execute": (False, "a command's effects cannot be rolled back automatically"),
    "test": (False, "tests may leave files behind; check with git"),
    "network": (False, "data sent over the network cannot be recalled"),
    "send_sensitive": (False, "data sent cannot be recalled"),
    "push_public": (False, "a public push cannot be recalled"),
}


def default_db_path() -> Path:
    from duckflow.paths import duckflow_home

    return duckflow_home() / "gate.db"


class Gate:
    """Every write, delete and execute passes here (seed 001 §9); reads are allowed outright.

    Jobs, decisions, the audit table and the auto-approve switch live in one SQLite file
    (default `duckflow_home()/gate.db`); the audit JSONL sits next to it (`audit.jsonl`).
    A new Gate on the same file sees the same pending jobs, so an approval survives a
    restart. `clock` returns epoch seconds (injectable for tests).
    """

    def __init__(
        self,
        db_path: str | Path | None = None,
        policy: GatePolicy | None = None,
        *,
        audit_path: str | Path | None = None,
        clock: Callable[[], float] | None = None,
        requested_by: str = "",
        poll_interval: float = 0.05,
    ) -> None:
        self.policy = policy if policy is not None else GatePolicy()
        self.db_path = Path(db_path) if db_path is not None else default_db_path()
        self.store = GateStore(self.db_path)
        self.clock = clock or time.time
        self.audit = AuditLog(self.store, audit_path or self.db_path.with_name("audit.jsonl"))
        self.autoapprove = AutoApprove(self.store, self.audit, self.clock)
        self.requested_by = requested_by
        self.poll_interval = poll_interval

    @classmethod
    def from_config(cls, cfg: Any = None, **kwargs: Any) -> Gate:
        """A gate with the user's configuration (`load_config().gate` unless `cfg` is given)."""
        if cfg is None:
            from duckflow.config import load_config

            cfg = load_config().gate
        policy = GatePolicy.from_config(cfg)
        db = Path(cfg.db_path).expanduser() if cfg.db_path else None
        audit = Path(cfg.audit_path).expanduser() if cfg.audit_path else None
        gate = cls(kwargs.pop("db_path", db), policy, audit_path=kwargs.pop("audit_path", audit), **kwargs)
        if getattr(cfg.auto_approve, "enabled", False):  # on at start (docs/gate.md "Auto-approve")
            gate.autoapprove.on_from_config(AutoApproveScope.defaults(policy), ttl_min=policy.auto_approve_ttl_min)
        return gate

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Gate:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- assessing ------------------------------------------------------------------------

    def assess(self, op: Operation) -> Assessment:
        """The operation's risk and the rules behind it."""
        return self.policy.rules.assess(op, cost_limit=self.policy.cost_limit)

    @staticmethod
    def requires_gate(op: Operation) -> bool:
        return requires_gate(op)

    # -- submitting -----------------------------------------------------------------------

    def submit(
        self,
        op: Operation,
        *,
        intent: str = "",
        rationale: str = "",
        impact: str = "",
        alternatives: str = "",
        diff_preview: str | None = None,
        summary: str | None = None,
        affected: Sequence[str] | None = None,
        reversible: bool | None = None,
        rollback: str | None = None,
        cost_estimate: float | None = None,
        requested_by: str | None = None,
    ) -> GateOutcome:
        """Decide what happens to `op` now: allowed, auto_approved, pending (a person decides) or refused.

        Every gated operation becomes a job with an ApprovalRequest, recorded with its
        decision in the database and the audit log. The auto-approve state is read inside
        the same transaction, so an off switch made elsewhere counts at once.
        """
        op = judged(op)
        assessment = self.assess(op)
        if not requires_gate(op):
            return GateOutcome("allowed", None, None, f"{op.kind} is read-only: no approval needed",
                               risk=assessment.risk)
        now = self.clock()
        if cost_estimate is None:
            cost_estimate = op.cost_estimate
        request = self._request(op, assessment, now, intent=intent, rationale=rationale,
                                impact=impact, alternatives=alternatives, diff_preview=diff_preview,
                                summary=summary, affected=affected, reversible=reversible,
                                rollback=rollback, cost_estimate=cost_estimate,
                                requested_by=requested_by)
        refusal = self.policy.refusal(op)
        entries: list[AuditEntry] = [self.audit.entry(now, "approval.requested", request.job_id,
                                                      request.requested_by or "unknown",
                                                      _request_audit(request))]
        with self.store.tx() as c:
            self.store.insert_job(c, request, "pending")
            outcome: GateOutcome
            decision: Decision | None
            if refusal:
                decision = Decision(request.job_id, "refused", "gate:policy", now, refusal)
                outcome = GateOutcome("refused", request.job_id, request, refusal, risk=request.risk)
            else:
                decision, outcome = self._auto_decision(request, now)
            if decision is not None:
                self.store.set_decision(c, decision)
                entries.append(self._decision_entry(decision))
            for e in entries:
                self.audit.store_row(c, e)
        for e in entries:
            self.audit.append_file(e)
        return outcome

    def _auto_decision(self, request: ApprovalRequest, now: float) -> tuple[Decision | None, GateOutcome]:
        job = request.job_id
        if request.hard_required:
            why = ", ".join(request.hard_required)
            return None, GateOutcome("pending", job, request,
                                     f"a person must decide ({why}: never auto-approved)",
                                     risk=request.risk)
        active = self.autoapprove.active(now)
        miss: str | None = "auto-approve is off"
        if active is not None:
            miss = active.scope.miss(request.operation, request.risk, self.policy)
            if miss is None:
                reason = f"auto-approved by {active.label} (until its TTL ends)"
                return (Decision(job, "auto_approved", f"auto:{active.label}", now, None),
                        GateOutcome("auto_approved", job, request, reason, risk=request.risk))
            miss = f"{active.label} does not cover it: {miss}"
        if not self.policy.require_approval and request.risk != "high":
            reason = "approval not required by configuration (gate.require_approval = false)"
            return (Decision(job, "auto_approved", "policy:no-approval-required", now, None),
                    GateOutcome("auto_approved", job, request, reason, risk=request.risk))
        return None, GateOutcome("pending", job, request, f"approval required ({miss})",
                                 risk=request.risk)

    def _request(self, op: Operation, assessment: Assessment, now: float, *, intent: str,
                 rationale: str, impact: str, alternatives: str, diff_preview: str | None,
                 summary: str | None, affected: Sequence[str] | None, reversible: bool | None,
                 rollback: str | None, cost_estimate: float | None,
                 requested_by: str | None) -> ApprovalRequest:
        rev_default, how_default = _ROLLBACK.get(op.kind, (False, "unknown operation: assume it cannot be undone"))
        if affected is None:
            affected = list(op.paths) or ([f"environment: `{op.command}` in the workspace"]
                                          if op.command else ["environment"])
        diff = diff_preview if diff_preview is not None else (op.diff or "")
        return ApprovalRequest(
            job_id=uuid.uuid4().hex,
            operation=op,
            # what a person reads is what is there: no escape, bidi override or lone CR hides text
            intent=visible(intent.strip() or op.describe()),
            rationale=visible(rationale.strip()),
            impact=visible(impact.strip() or _default_impact(op)),
            alternatives=visible(alternatives.strip()),
            diff_preview=cap_diff(visible(diff)) if diff else "",
            summary=visible(limit_lines(summary or intent or op.describe()) or op.describe()),
            affected=tuple(affected),
            reversible=rev_default if reversible is None else reversible,
            rollback=rollback or how_default,
            risk=assessment.risk,
            risk_reasons=assessment.reasons,
            hard_required=self.hard_reasons(op),
            cost_estimate=cost_estimate,
            created_at=now,
            requested_by=requested_by if requested_by is not None else self.requested_by,
        )

    # -- answering ------------------------------------------------------------------------

    def decide(self, job_id: str, granted: bool, by: str, note: str | None = None) -> Decision:
        """Answer a pending job (id or unique prefix). Answering twice raises AlreadyDecided;
        an expired job raises JobExpired."""
        full = self.store.resolve(job_id)
        self.expire_due()
        status: JobStatus = "granted" if granted else "denied"
        decision = Decision(full, status, by, self.clock(), note)
        e = self._decision_entry(decision)
        with self.store.tx() as c:
            if not self.store.set_decision(c, decision):
                row = c.execute("SELECT status, decided_by FROM jobs WHERE job_id = ?", (full,)).fetchone()
                if row["status"] == "expired":
                    raise JobExpired(full)
                raise AlreadyDecided(full, row["status"], row["decided_by"] or "?")
            self.audit.store_row(c, e)
        self.audit.append_file(e)
        return decision

    def auto_answer(self, job_id: str, scope: AutoApproveScope, *, by: str) -> Decision | str:
        """Answer a pending job for a run-scoped auto-approve (`duckflow run --auto-approve-workspace`).

        Recorded as `auto_approved` by `auto:<by>` — never as a person's grant — and only when
        nothing makes the job hard-required (judged again now, with the current policy and
        the command analysis) and `scope` covers it. Otherwise returns why (it stays pending).
        """
        full = self.store.resolve(job_id)
        self.expire_due()
        job = self.store.get_job(full)
        if job.status != "pending":
            raise AlreadyDecided(full, job.status, job.decision.by if job.decision else "?")
        req = job.request
        hard = self.hard_reasons(req.operation, req.hard_required)
        if hard:
            return f"a person must decide ({', '.join(hard)}: never auto-approved)"
        miss = scope.miss(judged(req.operation), req.risk, self.policy)
        if miss is not None:
            return f"the run's auto-approve does not cover it: {miss}"
        decision = Decision(full, "auto_approved", f"auto:{by}", self.clock(), None)
        e = self._decision_entry(decision)
        with self.store.tx() as c:
            if not self.store.set_decision(c, decision):
                raise AlreadyDecided(full, "decided", "?")
            self.audit.store_row(c, e)
        self.audit.append_file(e)
        return decision

    def hard_reasons(self, op: Operation, recorded: Sequence[str] = ()) -> tuple[str, ...]:
        """Why a person must decide `op`: what was recorded with the job, plus the current
        policy and command analysis (a job stored by an older version is judged again)."""
        return tuple(sorted(set(recorded) | set(self.policy.hard_reasons(judged(op)))))

    def grant(self, job_id: str, by: str, note: str | None = None) -> Decision:
        return self.decide(job_id, True, by, note)

    def deny(self, job_id: str, by: str, note: str | None = None) -> Decision:
        return self.decide(job_id, False, by, note)

    async def wait(self, job_id: str, timeout: float | None = None) -> Decision | None:
        """Wait until the job is decided — here or by another process — and return the decision.

        Polls the database (start `poll_interval`, growing to 0.5 s). Returns None when
        `timeout` seconds pass first (the job stays pending).
        """
        full = self.store.resolve(job_id)
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        delay = self.poll_interval
        while True:
            if self.policy.pending_expiry_min is not None:
                self.expire_due()
            job = self.store.get_job(full)
            if job.decision is not None:
                return job.decision
            if deadline is not None:
                left = deadline - loop.time()
                if left <= 0:
                    return None
                delay = min(delay, left)
            await asyncio.sleep(delay)
            delay = min(delay * 1.5, 0.5)

    def expire_due(self) -> list[str]:
        """Mark pending jobs older than gate.pending_expiry_min as expired; returns their ids."""
        if self.policy.pending_expiry_min is None:
            return []
        now = self.clock()
        cutoff = now - self.policy.pending_expiry_min * 60
        rows = self.store.query("SELECT job_id FROM jobs WHERE status = 'pending' AND created_at <= ?",
                                (cutoff,))
        done: list[str] = []
        for r in rows:
            d = Decision(r["job_id"], "expired", "gate:expiry", now,
                         f"not answered within {self.policy.pending_expiry_min} min")
            e = self._decision_entry(d)
            with self.store.tx() as c:
                if not self.store.set_decision(c, d):
                    continue
                self.audit.store_row(c, e)
            self.audit.append_file(e)
            done.append(d.job_id)
        return done

    def _decision_entry(self, d: Decision) -> AuditEntry:
        return self.audit.entry(d.at, f"approval.{d.status}", d.job_id, d.by,
                                {"approval_status": d.status, "note": d.note or ""})

    # -- reading --------------------------------------------------------------------------

    def get(self, job_id: str) -> Job:
        """One job by id or unique prefix."""
        self.expire_due()
        try:  # a full id (the companion's case) is read at once; a prefix is resolved first
            return self.store.get_job(job_id.strip().lower())
        except UnknownJob:
            return self.store.get_job(self.store.resolve(job_id))

    def pending(self) -> list[Job]:
        """Jobs waiting for a person, oldest first."""
        self.expire_due()
        return self.store.jobs(status="pending", limit=1000, newest_first=False)

    def history(self, limit: int = 50) -> list[Job]:
        """Recent jobs of any status, newest first."""
        self.expire_due()
        return self.store.jobs(limit=limit)

    def audit_entries(self, job_id: str | None = None) -> list[dict[str, Any]]:
        """Audit rows from the database (masked), oldest first."""
        return self.store.audit_rows(job_id=self.store.resolve(job_id) if job_id else None)


def judged(op: Operation) -> Operation:
    """`op` with its command judged by gate/commands.py when nobody did yet (any caller of
    `Gate.submit`, not only the workspace tools, gets a destructive command hard-required),
    and against the auto-approve list (gate/allowlist.py; without the session's context a new
    script is not listed)."""
    from dataclasses import replace

    if op.command and op.kind in ("execute", "test") and op.destructive is None:
        from duckflow.gate.commands import command_hazard

        op = replace(op, destructive=command_hazard(op.command))
    if op.kind in ("execute", "test") and op.allow is None:
        from duckflow.gate.allowlist import unlisted

        where = op.extra.get("workspace")  # bound by gate/binding.py: paths resolve there
        op = replace(op, allow=unlisted(op.command, tool=op.tool,
                                        root=Path(where) if isinstance(where, str) else None))
    return op


def _default_impact(op: Operation) -> str:
    if op.command:
        return f"runs `{op.command}` in the workspace"
    if op.paths:
        return f"{op.kind} on {op.files} path(s): {', '.join(op.paths[:5])}"
    return f"{op.kind} operation"


def _request_audit(r: ApprovalRequest) -> dict[str, Any]:
    """The request fields kept in the audit log (seed 003 §7.3 approval fields included)."""
    return {
        "approval_status": "pending",
        "kind": r.operation.kind, "tool": r.operation.tool, "paths": list(r.operation.paths),
        "command": r.operation.command or "", "task_type": r.operation.task_type or "",
        "risk": r.risk, "risk_reasons": list(r.risk_reasons), "hard_required": list(r.hard_required),
        "summary": r.summary, "intent": r.intent, "rationale": r.rationale, "impact": r.impact,
        "alternatives": r.alternatives, "diff_preview": r.diff_preview,
        "affected": list(r.affected), "reversible": r.reversible, "cost_estimate": r.cost_estimate,
    }
