"""What a run ends with: `AgentOutcome` per agent, `RunResult` for `Agent.run()`."""

from __future__ import annotations

from dataclasses import dataclass, field

from duckflow.core.chunks import AnyChunk
from duckflow.core.errors import CoreError
from duckflow.core.session import Session
from duckflow.llm.types import Usage


@dataclass
class AgentOutcome:
    """How one agent's run ended: final text, usage, and the error that stopped it, if any."""

    text: str = ""
    usage: Usage = field(default_factory=Usage)
    error: CoreError | None = None
    turns: int = 0


@dataclass
class RunResult:
    """What `run()` returns: the top agent's final text, every chunk, the session's usage."""

    text: str
    chunks: list[AnyChunk]
    usage: Usage
    error: str | None = None
    error_code: str | None = None
    session: Session | None = None
    exception: CoreError | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return self.error is None

    def raise_for_error(self) -> RunResult:
        """Raise the error that ended the run (e.g. `MaxTurnsExceeded`); else return self."""
        if self.exception is not None:
            raise self.exception
        if self.error is not None:
            raise CoreError(self.error, hint=f"error code: {self.error_code}")
        return self
