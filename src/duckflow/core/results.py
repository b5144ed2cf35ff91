"""What a run ends with: `AgentOutcome` per agent, `RunResult` for `Agent.run()`."""

from __future__ import annotations

from dataclasses import dataclass, field

from duckflow.core.chunks import AnyChunk
from duckflow.core.session import Session
from duckflow.errors import DuckflowError
from duckflow.llm.types import Usage


@dataclass
class AgentOutcome:
    """How one agent's run ended: final text, usage, and the error that stopped it, if any."""

    text: str = ""
    usage: Usage = field(default_factory=Usage)
    error: DuckflowError | None = None
    turns: int = 0


@dataclass
class RunResult:
    """What `run(..., raise_errors=False)` returns: final text, every chunk, usage, and the error.

    `error` is the exception that ended the run (its `.code` is the error chunk's code, its
    `.hint` the next step), or None; `run()` with the default `raise_errors=True` raises it.
    """

    text: str
    chunks: list[AnyChunk]
    usage: Usage
    session: Session
    error: DuckflowError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None
