"""The task loop: drives turns until the task is DONE, needs the person, stops making progress, or runs out of its budget.

Used by `duckflow run` (non-interactive) and by the dual loop's task side. A turn that ran
tools is an observation (the next turn is a new utterance for the transition limiter); a turn
with no tool results keeps the same utterance, so a model that only flips steps is refused
and stopped after `max_idle` such turns. Every task ends: it has a bounded number of model
calls and a time budget, said once at the start (`TaskBudget`); past either it stops with what it
has. `max_turns` counts the turns that called the model: a check the loop runs itself, and the
turn that concludes from it, use none (the 1.5B model's right edit at turn 11 was stopped before
its two checks could end it "Done"). The outcome carries the ending's kind and evidence (`expect.Result`): done, not done, or
finished but not verified.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast

from duckflow.companion.state import Status, Step
from duckflow.companion.turnctx import TurnResult
from duckflow.core.chunks import AnyChunk

if TYPE_CHECKING:
    from duckflow.companion.host import TurnHost

AUTO_BY = "auto-approve-workspace (duckflow run)"
# stopped: a role the router chose (the Worker loop, a Coder) could not finish
Ending = Literal["done", "approval", "input", "no_progress", "max_turns", "blocked", "error", "stopped", "budget"]


@dataclass(frozen=True)
class TaskBudget:
    """What one task may spend: model calls and seconds (companion.task_max_calls / task_time_budget_s)."""

    max_calls: int = 16
    seconds: float = 280.0

    def line(self) -> str:
        minutes, secs = divmod(int(self.seconds), 60)
        took = f"{minutes} min" + (f" {secs} s" if secs else "") if minutes else f"{secs} s"
        return f"Budget: up to {self.max_calls} model calls and {took}; then it ends with what it has."


@dataclass
class TaskOutcome:
    ending: Ending
    message: str
    turns: int
    results: list[TurnResult] = field(default_factory=list)
    result: Any = None  # expect.Result: the ending's kind (done | not_done | not_verified) and evidence

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
            if d.result:
                from duckflow.companion.expect import Result

                outcome.result = Result(**cast("dict[str, Any]", d.result))
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
    budget: TaskBudget | None = None,
) -> TaskOutcome:
    budget = budget or getattr(session, "task_budget", None) or TaskBudget()
    session.chunks.notice("budget", budget.line(), max_calls=budget.max_calls, seconds=budget.seconds)
    calls0, t0 = _calls(session), time.monotonic()
    outcome = await _drive(session, first, max_turns, max_idle, auto_approve_workspace, budget, calls0, t0)
    return _with_result(session, outcome)


async def _drive(session: TurnHost, first: Awaitable[TurnResult], max_turns: int, max_idle: int,
                 auto_approve_workspace: bool, budget: TaskBudget, calls0: int, t0: float) -> TaskOutcome:
    results: list[TurnResult] = []

    async def within(turn: Awaitable[TurnResult]) -> TurnResult | None:
        left = budget.seconds - (time.monotonic() - t0)
        try:
            if left <= 0:
                raise TimeoutError
            results.append(await asyncio.wait_for(turn, left))
            return results[-1]
        except TimeoutError:
            if asyncio.iscoroutine(turn):
                turn.close()
            return None

    def spent(why: str) -> TaskOutcome:
        session.owner.set_status(Status.REQUIRES_USER_INPUT, f"the task's budget ran out: {why}")
        log = session.turn.checks
        tried = log.last or ("changed " + ", ".join(log.written[:3]) if log.written else "nothing changed yet")
        text = f"Not done — {why} (model calls: {_calls(session) - calls0}); the last thing it tried: {tried}"
        return TaskOutcome("budget", text, len(results), results)

    if await within(first) is None:
        return spent(f"out of time after {int(budget.seconds)} s")
    idle = approvals = free = 0  # free: turns with no model call (a check the loop ran itself)
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
                        approvals += 1  # an auto-approved action is the same turn, not a new one
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
        if len(results) - approvals - free >= max_turns:
            return TaskOutcome("max_turns", f"stopped after {max_turns} turns without finishing", len(results), results)
        idle = 0 if (res.ran_tools or res.moved) else idle + 1
        if idle >= max_idle:
            return TaskOutcome("no_progress", "stopped: no tool ran and no step changed for "
                               f"{max_idle} turns", len(results), results)
        if _calls(session) - calls0 >= budget.max_calls:
            return spent(f"{budget.max_calls} model calls used")
        before = _calls(session)
        if await within(session.continue_task(observed=res.ran_tools)) is None:
            return spent(f"out of time after {int(budget.seconds)} s")
        free += int(_calls(session) == before)  # (bounded: each check runs once a change, idle turns stop it)


def _calls(session: TurnHost) -> int:
    return int(getattr(getattr(session, "engine", None), "calls", 0) or 0)


def _with_result(session: TurnHost, outcome: TaskOutcome) -> TaskOutcome:
    """The outcome with its ending's kind and evidence; a finished task's message ends with it."""
    from duckflow.companion.expect import result_of

    log = session.turn.checks
    finished = outcome.ending == "done"
    if outcome.ending == "budget" and log.passed and not log.changed:
        finished = True  # the check passed before the time ran out: that is what it shows
    outcome.result = result_of(log, finished, outcome.message)
    if finished and outcome.result.said not in outcome.message:
        outcome.message = f"{outcome.message}\n{outcome.result.said}".strip()
    return outcome
