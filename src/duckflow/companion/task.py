"""The task loop: drives turns until the task is DONE, needs the person, or stops making progress.

Used by `duckflow run` (non-interactive) and by the dual loop's task side. A turn that ran
tools is an observation (the next turn is a new utterance for the transition limiter); a turn
with no tool results keeps the same utterance, so a model that only flips steps is refused
and stopped after `max_idle` such turns.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, cast

from duckflow.companion.state import Status, Step
from duckflow.companion.turnctx import TurnResult
from duckflow.core.chunks import AnyChunk

if TYPE_CHECKING:
    from duckflow.companion.host import TurnHost

AUTO_BY = "auto-approve-workspace (duckflow run)"
# stopped: a role the router chose (the Worker loop, a Coder) could not finish
Ending = Literal["done", "approval", "input", "no_progress", "max_turns", "blocked", "error", "stopped"]


@dataclass
class TaskOutcome:
    ending: Ending
    message: str
    turns: int
    results: list[TurnResult] = field(default_factory=list)

    @property
    def success(self) -> bool:
        return self.ending == "done"


async def outcome_of(chunks: AsyncIterator[AnyChunk]) -> TaskOutcome:
    """A chunk stream (a `Conversation`'s, a session's) run to its end; its `done` chunk as the outcome."""
    outcome = TaskOutcome("stopped", "nothing was routed", 0)
    async for chunk in chunks:
        if chunk.type == "done":
            d = chunk.data
            outcome = TaskOutcome(cast("Ending", d.ending or "done"), d.text, d.turns)
    return outcome


def auto_answer(session: TurnHost, job_id: str) -> str | None:
    """Answer a pending job for `--auto-approve-workspace`: None when the gate recorded it as
    auto-approved (never as a person's grant), else why a person must decide."""
    from duckflow.gate import AutoApproveScope
    from duckflow.gate.request import Decision

    answered = session.runner.gate.auto_answer(job_id, AutoApproveScope.workspace(), by=AUTO_BY)
    if isinstance(answered, Decision):
        session.chunks.notice("auto_approved", "auto-approved for this run (--auto-approve-workspace): "
                              f"job {job_id}", job_id=job_id)
        return None
    return answered


async def drive(
    session: TurnHost,
    first: Awaitable[TurnResult],
    *,
    max_turns: int = 12,
    max_idle: int = 2,
    auto_approve_workspace: bool = False,
) -> TaskOutcome:
    results: list[TurnResult] = [await first]
    idle = 0
    while True:
        res = results[-1]
        state = session.state
        if res.stopped is not None:
            return TaskOutcome("blocked", res.reply, len(results), results)
        if state.step == Step.DONE:
            return TaskOutcome("done", res.reply, len(results), results)
        if res.pending:
            request = res.pending.get("request") or {}
            why = ", ".join(request.get("hard_required") or []) or "approval required"
            if auto_approve_workspace:
                answered = auto_answer(session, res.pending["job_id"])
                if answered is None:
                    resumed = await session.resume_pending()
                    if resumed is not None:
                        results.append(resumed)
                        continue
                else:
                    why = answered
            return TaskOutcome(
                "approval",
                f"waiting for approval of job {res.pending['job_id']} ({why})",
                len(results), results,
            )
        if state.status == Status.REQUIRES_USER_INPUT or res.next_step in ("pending_user", "defer"):
            return TaskOutcome("input", res.reply or "the companion needs your input", len(results), results)
        if len(results) >= max_turns:
            return TaskOutcome("max_turns", f"stopped after {max_turns} turns without finishing", len(results), results)
        idle = 0 if (res.ran_tools or res.moved) else idle + 1
        if idle >= max_idle:
            return TaskOutcome("no_progress", "stopped: no tool ran and no step changed for "
                               f"{max_idle} turns", len(results), results)
        results.append(await session.continue_task(observed=res.ran_tools))
