"""The I/O contracts of seed 003 §4-5 as pydantic models: InputMessage, RoutingDecision, Worker and Coder outputs.

`RoutingDecision.public()` is exactly what `duckflow route --json` prints and what channels get:
`{primary_route, source, confidence, reason, evidence, flags: {local_only}}`. Worker and Coder
replies are read with the tolerant JSON reader (`read_worker_output`, `read_coder_output`);
a reply that cannot be read becomes a failed WorkerOutput with `needs_next_loop=false` (§5).
"""

# no `from __future__ import annotations` here: pydantic would compile every field's annotation
# string to evaluate it (a ForwardRef each; ~15% of this module's import)

import uuid
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from duckflow.orchestra.settings import ROUTES

Channel = Literal["cli", "line", "slack", "http", "acp", "mcp"]  # acp: an editor (channels/acp/); mcp: another agent (channels/mcpserve/)
Source = Literal["command", "rules", "classifier", "fallback"]
Risk = Literal["low", "medium", "high"]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class InputMessage(BaseModel):
    """One person's message as a channel hands it over (seed 003 §4.1)."""

    channel: Channel = "cli"
    session_id: str = "cli"
    user_text: str
    raw: dict[str, Any] = {}  # copied per instance; a literal, not default_factory=list/dict (see core/chunks.py)
    received_at: str = Field(default_factory=_now)


class RouteFlags(BaseModel):
    local_only: bool = False


class RoutingDecision(BaseModel):
    """Where the message goes and why (seed 003 §4.2), plus what the orchestra needs to act on it.

    Only the first six fields are the public contract (`public()`); the rest stay internal:
    `text` is the message without its commands, `notice` a message to show instead of a model
    answer (e.g. `/local` switched on, `/code` refused), `declaration` the §8 line.
    """

    model_config = ConfigDict(extra="forbid")

    primary_route: str = "CHAT"
    source: Source = "fallback"
    confidence: float = 0.0
    reason: str = ""
    evidence: list[str] = []
    flags: RouteFlags = Field(default_factory=RouteFlags)
    text: str = ""
    notice: str = ""
    refused: bool = False
    declaration: str = ""
    classifier_route: str | None = None
    classifier_confidence: float | None = None
    error_reason: str | None = None
    notes: list[str] = []

    def public(self) -> dict[str, Any]:
        return {
            "primary_route": self.primary_route,
            "source": self.source,
            "confidence": round(float(self.confidence), 4),
            "reason": self.reason,
            "evidence": list(self.evidence),
            "flags": {"local_only": self.flags.local_only},
        }


def _upper_route(value: Any) -> Any:
    return value.strip().upper() if isinstance(value, str) else value


def _at_most_three(value: Any) -> Any:
    if isinstance(value, str):
        value = [value] if value.strip() else []
    return list(value)[:3] if isinstance(value, list | tuple) else value


class WorkerInput(BaseModel):
    """What a Worker (or Coder) gets for one loop (seed 003 §4.3)."""

    model_config = ConfigDict(defer_build=True)  # built on first use: a plain run never needs it

    route: str
    task: str
    session_id: str = "cli"
    loop_index: int = 0
    context: str = ""
    previous_results: list[str] = []
    constraints: list[str] = []
    local_only: bool = False


class WorkerOutput(BaseModel):
    """A Worker's JSON reply (seed 003 §4.4). `ok=False` marks a failed worker (never loops on)."""

    model_config = ConfigDict(defer_build=True)  # built on first use: a plain run never needs it

    result: str
    needs_next_loop: bool
    why: str
    next_actions: list[str] = Field(default_factory=list, max_length=3)
    questions_for_user: list[str] = Field(default_factory=list, max_length=3)
    confidence: float = Field(ge=0.0, le=1.0)
    risk: Risk
    fit: bool | None = None
    suggested_route: str | None = None
    ok: bool = True
    error: str | None = None

    _cap = field_validator("next_actions", "questions_for_user", mode="before")(_at_most_three)

    @field_validator("risk", mode="before")
    @classmethod
    def _risk_lower(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("suggested_route", mode="before")
    @classmethod
    def _route(cls, value: Any) -> Any:
        value = _upper_route(value)
        return value if value in ROUTES else None

    @classmethod
    def failed(cls, error: str, raw: str = "") -> "WorkerOutput":
        """§5: a failed worker sets needs_next_loop=false."""
        return cls(result=raw[:2000], needs_next_loop=False, why=error, confidence=0.0, risk="medium",
                   ok=False, error=error)


class CoderOutput(BaseModel):
    """A Coder's proposal (seed 003 §5.1): plan + unified-diff patch; it never executes anything."""

    model_config = ConfigDict(defer_build=True)  # built on first use: a plain run never needs it

    job_id: str = Field(default_factory=lambda: "job-" + uuid.uuid4().hex[:10])
    plan: str
    patch: str
    risk: str = "medium"
    need_approval: bool = True
    cost_hint: str | None = None

    @field_validator("job_id", mode="before")
    @classmethod
    def _job_id(cls, value: Any) -> Any:
        return value or "job-" + uuid.uuid4().hex[:10]

    @field_validator("plan", "risk", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        if isinstance(value, list):
            return "\n".join(str(v) for v in value)
        if isinstance(value, dict):
            return "; ".join(f"{k}: {v}" for k, v in value.items())
        return value

    @property
    def risk_level(self) -> Risk:
        """low / medium / high read from the free-text risk field."""
        head = self.risk.strip().lower()
        for level in ("high", "medium", "low"):
            if head.startswith(level) or f"risk: {level}" in head or f"risk={level}" in head:
                return level
        return "medium"


class ChatProposal(BaseModel):
    """Chat's reroute proposal (seed 003 §3.4)."""

    model_config = ConfigDict(defer_build=True)  # built on first use: a plain run never needs it

    propose_next_loop: bool = False
    route: str = "CHAT"
    reason: str = ""
    confidence: float = Field(default=0.0, ge=0.0, le=1.0)

    @field_validator("route", mode="before")
    @classmethod
    def _route(cls, value: Any) -> Any:
        value = _upper_route(value)
        if value not in ROUTES:
            raise ValueError(f"unknown route {value!r}")
        return value


def read_worker_output(text: str) -> "WorkerOutput":
    """A Worker's reply read tolerantly; anything unreadable is a failed worker (needs_next_loop=false)."""
    from duckflow.protocols.jsonreply import read_json

    reply = read_json(text, WorkerOutput)
    if not reply.ok:
        return WorkerOutput.failed("worker reply is not valid JSON: " + "; ".join(reply.errors or ["no JSON"]), text)
    value: WorkerOutput = reply.value
    return value


def read_coder_output(text: str) -> CoderOutput | None:
    """A Coder's reply read tolerantly; None when it has no plan and patch."""
    from duckflow.protocols.jsonreply import read_json

    reply = read_json(text, CoderOutput)
    return reply.value if reply.ok else None
