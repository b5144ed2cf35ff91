"""The five fixed state fields kept consistent at each transition (goal, why_now, constraints, plan_brief,
open_questions): repaired where the repair is certain, else one warning line.

Checked after every allowed move (`CompanionSession._transition`):
- each field within its limits (one line of at most 200 characters; at most 2 constraints, 3 plan
  steps, 2 open questions, each at most 100 characters): set again through its setter, which cuts;
- a task under way has a goal: an empty goal becomes the task's words, `why_now` "the person asked";
- the same constraint twice: kept once;
- work starts (EXECUTION) with no plan_brief while a plan exists: the plan's steps become it;
- an open question while the task goes on to EXECUTION or DONE without the person: a warning;
- DONE with a plan_brief or open questions left: the questions are closed (the task ended), a warning.
Each repair is recorded in the decision log; warnings go out as a `state_check` notice (--verbose).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from duckflow.companion.state import (
    CONSTRAINTS_MAX,
    GOAL_MAX,
    ITEM_MAX,
    OPEN_QUESTIONS_MAX,
    PLAN_BRIEF_MAX,
    WHY_NOW_MAX,
    AgentState,
    Status,
    Step,
)

if TYPE_CHECKING:
    from duckflow.companion.host import TurnHost
    from duckflow.companion.plan import Plan


Repair = tuple[str, Callable[[AgentState], object]]


def _over(items: list[str], count: int) -> bool:
    return len(items) > count or any(len(i) > ITEM_MAX for i in items)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def check(state: AgentState, plan: Plan | None) -> tuple[list[Repair], list[str]]:
    """(repairs to apply, each with what it does; warnings) for the state as it is after a move."""
    repairs: list[Repair] = []
    warnings: list[str] = []
    if len(state.goal) > GOAL_MAX or "\n" in state.goal:
        repairs.append(("goal cut to one line", lambda s: s.set_goal(_one_line(s.goal))))
    if len(state.why_now) > WHY_NOW_MAX or "\n" in state.why_now:
        repairs.append(("why_now cut to one line", lambda s: s.set_why_now(_one_line(s.why_now))))
    if len(set(state.constraints)) < len(state.constraints):
        repairs.append(("a constraint given twice kept once",
                        lambda s: s.set_constraints(list(dict.fromkeys(s.constraints)))))
    for name, count in (("constraints", CONSTRAINTS_MAX), ("plan_brief", PLAN_BRIEF_MAX),
                        ("open_questions", OPEN_QUESTIONS_MAX)):
        if _over(getattr(state, name), count):
            def cut(s: AgentState, n: str = name) -> None:
                getattr(s, f"set_{n}")(list(getattr(s, n)))

            repairs.append((f"{name} cut to its limit", cut))
    if state.task and not state.goal and state.step != Step.PLANNING:
        def goal(s: AgentState) -> None:
            s.set_goal(_one_line(s.task))
            if not s.why_now:
                s.set_why_now("the person asked for it")

        repairs.append(("goal was empty: the task's words", goal))
    if state.step == Step.EXECUTION and not state.plan_brief and plan is not None and plan.action_specs:
        steps = [a.line() for a in plan.action_specs if a.state in ("pending", "running")] \
            or [a.line() for a in plan.action_specs]
        repairs.append(("plan_brief was empty while a plan runs: its steps", lambda s: s.set_plan_brief(steps[:3])))
    if state.open_questions and state.status != Status.REQUIRES_USER_INPUT and state.step == Step.EXECUTION:
        warnings.append(f"executing with an open question: {state.open_questions[-1]}")
    if state.step == Step.DONE and state.open_questions:
        warnings.append(f"done with an open question left: {state.open_questions[-1]} (closed)")
        repairs.append(("open questions closed: the task is done", lambda s: s.set_open_questions([])))
    return repairs, warnings


def keep_consistent(host: TurnHost) -> None:
    """Check the five fields after a move: repairs applied as one change (logged), warnings as notices."""
    repairs, warnings = check(host.state, host.owner.plans.latest())
    if repairs:
        def apply(s: AgentState) -> None:
            for what, fix in repairs:
                fix(s)
                s.log_decision(f"state check: {what}")

        host.owner.change("state check: " + "; ".join(what for what, _ in repairs), apply)
    for line in warnings:
        host.chunks.notice("state_check", line)
