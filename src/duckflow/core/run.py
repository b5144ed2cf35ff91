"""The state of one agent run shared with tools and handoff targets: session, sink, trace.

`RunContext` is created by `Agent.stream()` for the top agent and copied (depth + 1) for
each handoff target. Chunks are handed to `emit`, which queues them for the consumer; the
session's sequence stamps `seq` when the consumer receives them, so numbering has no gaps
whatever the order in which parallel tools finish.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from duckflow.core.session import Session
from duckflow.errors import DuckflowError

if TYPE_CHECKING:  # the chunk models are imported where a chunk is made (see core/tools.py)
    from duckflow.core.chunks import AnyChunk, WarningChunk
    from duckflow.core.results import AgentOutcome
    from duckflow.core.token_guard import TokenGuard


class TraceSink(Protocol):
    """What the engine needs from `duckflow.core.trace.TraceLogger` (and `NullTrace`)."""

    def emit(self, event: str, *, session: str = "", agent: str = "", **fields: Any) -> None: ...


def null_trace() -> TraceSink:
    """The no-op trace (`duckflow.core.trace.NullTrace`, imported on first use)."""
    from duckflow.core.trace import NullTrace

    return NullTrace()


class RunAborted(Exception):  # noqa: N818 - control flow, not an error a person meets
    """Stops the whole session run; the error chunk has already been emitted."""

    def __init__(self, error: DuckflowError) -> None:
        super().__init__(str(error))
        self.error = error


class RunAgent(Protocol):
    """What a run and a handoff need of an agent (`core.agent.Agent`), so they need not import it."""

    @property
    def name(self) -> str: ...
    @property
    def instructions(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def extra_cfg(self) -> dict[str, Any]: ...

    async def execute(self, input: Any, run: RunContext) -> AgentOutcome: ...
    def on_handoff_return(self, target: Any, outcome: AgentOutcome) -> str | Awaitable[str]: ...


@dataclass
class RunContext:
    session: Session
    agent: RunAgent
    emit: Callable[[AnyChunk], None]
    trace: TraceSink
    token_guard: TokenGuard | None = None
    depth: int = 0
    max_depth: int = 3
    started: float = field(default_factory=time.perf_counter)
    #: False when `trace` records nothing (`NullTrace.enabled`): hot paths skip building events
    tracing: bool = field(init=False, default=True)

    def __post_init__(self) -> None:
        self.tracing = getattr(self.trace, "enabled", True)

    def child(self, agent: RunAgent) -> RunContext:
        return replace(self, agent=agent, depth=self.depth + 1, started=time.perf_counter())

    def trace_event(self, event: str, **fields: Any) -> None:
        if not self.tracing:
            return
        self.trace.emit(event, session=self.session.id, agent=self.agent.name, **fields)

    def fail(self, error: DuckflowError, *, tool: str | None = None) -> None:
        """Emit an error chunk and an `error` trace event for `error`."""
        from duckflow.core.chunks import error as error_chunk

        self.emit(error_chunk(self.agent.name, error.code, error.message, hint=error.hint, tool=tool))
        self.trace_event("error", code=error.code, message=error.message, tool=tool)

    def abort(self, error: DuckflowError, *, tool: str | None = None) -> RunAborted:
        """Emit the error, and return the exception that ends the whole session run."""
        self.fail(error, tool=tool)
        return RunAborted(error)

    async def before_call(self, what: str) -> None:
        """Ask the token guard before a model or tool call; over the block line, abort."""
        if self.token_guard is None:
            return
        status = await self.token_guard.status(self.session.id)
        if status.level == "block":
            from duckflow.core.errors import TokenBudgetExceeded

            raise self.abort(TokenBudgetExceeded(
                status.message + f" (before {what})",
                hint="start a new session, or raise token_guard.block_at in the config",
            ))

    async def count(self, tokens: int, *, announce: Callable[[int], None] | None = None) -> None:
        """Add tokens to the session's total; the first time past warn_at, emit a warning.

        `announce(total)` is called with the new session total before any warning is emitted
        (the agent uses it to put the total in its usage chunk).
        """
        if self.token_guard is None:
            if announce is not None:
                announce(-1)
            return
        status = await self.token_guard.add(self.session.id, tokens)
        if announce is not None:
            announce(status.total)
        if status.level != "ok" and not self.session.token_warned:
            self.session.token_warned = True
            from duckflow.core.chunks import warning

            chunk: WarningChunk = warning(self.agent.name, "token_budget", status.message,
                                          total=status.total, warn_at=status.warn_at,
                                          block_at=status.block_at)
            self.emit(chunk)
            self.trace_event("guardrail", guardrail="token_guard", tripwire=False,
                             message=status.message)


class ChunkMailbox:
    """Chunks on their way from a run to its one consumer, on the loop's thread.

    `put` (the run's `emit`) never waits; `close` ends the stream once the buffered chunks are
    taken; `get` waits for the next one and gives None after the close. Like an unbounded
    `asyncio.Queue` with a sentinel, without its per-item bookkeeping (a turn hands over ~7).
    """

    __slots__ = ("_closed", "_items", "_waiter")

    def __init__(self) -> None:
        self._items: deque[AnyChunk] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._closed = False

    def put(self, chunk: AnyChunk) -> None:
        self._items.append(chunk)
        self._wake()

    def close(self) -> None:
        self._closed = True
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    async def get(self) -> AnyChunk | None:
        while not self._items:
            if self._closed:
                return None
            waiter = self._waiter = asyncio.get_running_loop().create_future()
            await waiter
        return self._items.popleft()


def count_text_tokens(text: str, model: str | None = None) -> int:
    """Tokens of `text` for the TokenGuard's running total: pieces seen before exactly, the rest
    by the calibrated estimate (`llm.tokens.token_estimate`), so no BPE table is loaded."""
    if not text:
        return 0
    from duckflow.llm.tokens import token_estimate

    return token_estimate(text, model).tokens
