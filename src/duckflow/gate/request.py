"""The values the gate hands out: `ApprovalRequest`, `Decision`, `Job` and `GateOutcome`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from typing import Any, Literal

from duckflow.gate.operation import Operation, Risk

JobStatus = Literal["pending", "granted", "denied", "auto_approved", "refused", "expired"]
OutcomeKind = Literal["allowed", "auto_approved", "pending", "refused"]
FINAL_STATUSES = frozenset({"granted", "denied", "auto_approved", "refused", "expired"})


def iso(ts: float | None) -> str | None:
    """Epoch seconds -> `2026-11-25T21:40:00Z` (UTC)."""
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def limit_lines(text: str, n: int = 3, width: int = 160) -> str:
    """At most `n` lines of at most `width` characters; a cut is visible as "…"."""
    lines = [ln.rstrip() for ln in text.strip().splitlines() if ln.strip()]
    out = [ln if len(ln) <= width else ln[: width - 1] + "…" for ln in lines[:n]]
    if len(lines) > n:
        out[-1] = out[-1][: width - 1] + "…"
    return "\n".join(out)


@dataclass(frozen=True)
class ApprovalRequest:
    """What a person sees before deciding (seed 001 §8.2's five points, seed 003 §6.3).

    intent, rationale, impact, alternatives and diff_preview are the five points; `summary`
    is one to three lines; `affected` lists files or environment; `reversible` and
    `rollback` say whether and how it can be undone; `cost_estimate` is in USD when known.
    `hard_required` names why no auto-approve may answer it (empty: a scope may).
    """

    job_id: str
    operation: Operation
    intent: str
    rationale: str
    impact: str
    alternatives: str
    diff_preview: str
    summary: str
    affected: tuple[str, ...]
    reversible: bool
    rollback: str
    risk: Risk
    risk_reasons: tuple[str, ...] = ()
    hard_required: tuple[str, ...] = ()
    cost_estimate: float | None = None
    created_at: float = 0.0
    requested_by: str = ""

    def to_dict(self) -> dict[str, Any]:
        # the fields one level deep (every value but the operation is immutable), not asdict's
        # recursive deep copy of the operation that the next line replaces anyway
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["operation"] = self.operation.to_dict()
        data["affected"] = list(self.affected)
        data["risk_reasons"] = list(self.risk_reasons)
        data["hard_required"] = list(self.hard_required)
        data["created_at_iso"] = iso(self.created_at)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ApprovalRequest:
        known = set(cls.__dataclass_fields__)
        values = {k: v for k, v in data.items() if k in known}
        values["operation"] = Operation.from_dict(data["operation"])
        for key in ("affected", "risk_reasons", "hard_required"):
            values[key] = tuple(values.get(key) or ())
        return cls(**values)

    def render(self) -> str:
        """The request as text for a terminal or a chat message."""
        rev = f"yes — {self.rollback}" if self.reversible else f"no — {self.rollback}"
        lines = [
            f"Approval needed [{self.job_id[:8]}] risk {self.risk}: {self.summary}",
            f"  intent:       {self.intent or '-'}",
            f"  rationale:    {self.rationale or '-'}",
            f"  impact:       {self.impact or '-'}",
            f"  alternatives: {self.alternatives or '-'}",
            f"  affected:     {', '.join(self.affected) or '-'}",
            f"  reversible:   {rev}",
        ]
        if self.cost_estimate is not None:
            lines.append(f"  cost:         ~${self.cost_estimate:.4f}")
        if self.hard_required:
            lines.append(f"  a person must decide: {', '.join(self.hard_required)}")
        if self.risk_reasons:
            lines.append(f"  risk because: {'; '.join(self.risk_reasons)}")
        if self.diff_preview:
            lines += ["", self.diff_preview.rstrip("\n")]
        return "\n".join(lines)


@dataclass(frozen=True)
class Decision:
    """How a job ended: granted, denied, auto_approved, refused or expired; by whom and when.

    `by` is an identity such as `cli:alice`, `auto:scope#3`, `policy:no-approval-required`.
    """

    job_id: str
    status: JobStatus
    by: str
    at: float
    note: str | None = None

    @property
    def granted(self) -> bool:
        """True when the operation may run (granted by a person or auto-approved)."""
        return self.status in ("granted", "auto_approved")

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "at_iso": iso(self.at), "granted": self.granted}


@dataclass(frozen=True)
class Job:
    """One approval job as stored: the request, its current status and its decision, if any."""

    request: ApprovalRequest
    status: JobStatus
    decision: Decision | None = None

    @property
    def job_id(self) -> str:
        return self.request.job_id

    def to_dict(self) -> dict[str, Any]:
        return {
            "job_id": self.job_id,
            "status": self.status,
            "request": self.request.to_dict(),
            "decision": self.decision.to_dict() if self.decision else None,
        }


@dataclass(frozen=True)
class GateOutcome:
    """What `Gate.submit` answers.

    allowed: no approval needed (read-only), no job; auto_approved: an active scope or the
    policy approved it (job recorded); pending: a person must decide (`job_id`); refused:
    the guard or the policy refuses it outright (job recorded). `reason` says why.
    """

    decision: OutcomeKind
    job_id: str | None
    request: ApprovalRequest | None
    reason: str
    risk: Risk = "low"
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def may_proceed(self) -> bool:
        return self.decision in ("allowed", "auto_approved")

    def to_dict(self) -> dict[str, Any]:
        return {
            "decision": self.decision,
            "job_id": self.job_id,
            "reason": self.reason,
            "risk": self.risk,
            "request": self.request.to_dict() if self.request else None,
        }
