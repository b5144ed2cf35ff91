"""One top-level run of an agent: its session (given, loaded by id or fresh), its chunk mailbox, its outcome.

`Agent.stream()` and `Agent.run()` (core/agent.py) drive one; the agent is typed by `RunAgent`,
so this module does not import agent.py.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from duckflow.core.errors import InternalError
from duckflow.core.results import AgentOutcome
from duckflow.core.run import ChunkMailbox, RunAborted, RunAgent, RunContext, TraceSink
from duckflow.core.session import Session, SessionStore

if TYPE_CHECKING:
    from duckflow.core.chunks import AnyChunk
    from duckflow.core.token_guard import TokenGuard


class TopRun:
    """One top-level run: `chunks()` streams its chunks; `outcome` holds how it ended."""

    def __init__(self, agent: RunAgent, input: Any, session: Session | str | None, *, sessions: SessionStore,
                 trace: TraceSink, token_guard: TokenGuard | None, max_depth: int) -> None:
        self.agent = agent
        self.sessions = sessions
        self.trace = trace
        self.token_guard = token_guard
        self.max_depth = max_depth
        self.input = input
        # a Session object is the caller's; an id is loaded from (and saved to) the agent's
        # store; no session is a fresh one that nobody keeps after the run
        self.named = isinstance(session, str) and bool(session)
        if isinstance(session, Session):
            self.session = session
        elif isinstance(session, str) and session:
            self.session = sessions.load(session)
        else:
            self.session = Session()
        self.outcome = AgentOutcome()

    async def chunks(self) -> AsyncGenerator[AnyChunk, None]:
        mailbox = ChunkMailbox()
        agent = self.agent
        run = RunContext(self.session, agent, mailbox.put, self.trace, self.token_guard, 0, self.max_depth)

        async def drive() -> None:
            try:
                self.outcome = await agent.execute(self.input, run)
            except RunAborted as aborted:
                self.outcome = AgentOutcome(error=aborted.error)
            except Exception as exc:  # a bug in a hook or the engine: report it, end the run
                err = InternalError(f"the run failed unexpectedly: {type(exc).__name__}: {exc}",
                                    hint="this is a bug in a hook, a codec or Duckflow; see the trace")
                err.__cause__ = exc
                run.fail(err)
                self.outcome = AgentOutcome(error=err)
            finally:
                mailbox.close()

        task = asyncio.create_task(drive())
        try:
            while (chunk := await mailbox.get()) is not None:
                yield self.session.seq.stamp(chunk)
            await task
        finally:
            if self.named:
                self.sessions.save(self.session)
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
