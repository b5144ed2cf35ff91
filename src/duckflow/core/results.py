"""What a run ends with: `AgentOutcome` per agent, `RunResult` for `Agent.run()`."""

from __future__ import annotations

from dataclasses import dataclass, field

from duckflow.core.chunks import AnyChunk
from duckflow.core.session import Session
from duckflow.errors import DuckflowError
from duckflow.llm.types import ToolCall, Usage


@dataclass(frozen=True)
class PendingCall:
    """A call of a turn the run paused before (core/approvals.py); `needs_approval` ones wait
    for a person's answer."""

    call: ToolCall
    kind: str
    needs_approval: bool

    @property
    def id(self) -> str:
        return self.call.id


@dataclass
class AgentOutcome:
    """How one agent's run ended: final text, usage, and the error that stopped it, if any."""

    text: str = ""
    usage: Usage = field(default_factory=Usage)
    error: DuckflowError | None = None
    turns: int = 0
    pending: list[PendingCall] = field(default_factory=list)  # paused for approval (core/approvals.py)


@dataclass
class RunResult:
    """What `run(..., raise_errors=False)` returns: final text, every chunk, usage, and the error.

    `error` is the exception that ended the run (its `.code` is the error chunk's code, its
    `.hint` the next step), or None; `run()` with the default `raise_errors=True` raises it.
    `pending` holds the calls a run paused before (`Agent(ask_approval=True)`): answer them
    with `agent.resume(result, {call_id: True | False})`.
    """

    text: str
    chunks: list[AnyChunk]
    usage: Usage
    session: Session
    error: DuckflowError | None = None
    pending: list[PendingCall] = field(default_factory=list)

    @property
    def paused(self) -> bool:
        """The run waits for a person's answer to `pending` calls."""
        return bool(self.pending) and self.error is None

    @property
    def ok(self) -> bool:
        return self.error is None
