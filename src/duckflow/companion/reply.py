"""The text a turn says to the person: the decision's reply, results, a pending approval, and the dialog policy."""

from __future__ import annotations

from collections.abc import Callable

from duckflow.companion.actions import CallOutcome
from duckflow.companion.decision import MainDecision
from duckflow.companion.policy import DialogPolicy, Impact, Situation
from duckflow.companion.state import AgentState


def outcome_text(state: AgentState, outcomes: list[CallOutcome]) -> str:
    lines = [f"- {o.line(160)}" for o in outcomes if o.status != "pending"]
    if state.pending_gate and state.pending_job:
        lines.append(f"Waiting for your approval: job {state.pending_job['job_id']} "
                     f"({state.pending_job['summary']})")
    return "\n".join(lines)


def impact_of(outcomes: list[CallOutcome], op_class: Callable[[str], str]) -> Impact:
    ops = {op_class(o.call.name) for o in outcomes}
    return "high" if ops & {"delete", "execute"} else ("medium" if "write" in ops else "low")


def compose_reply(
    state: AgentState,
    policy: DialogPolicy,
    op_class: Callable[[str], str],
    user_text: str | None,
    d: MainDecision,
    extra: str,
    outcomes: list[CallOutcome],
    message: str,
) -> str:
    parts = [p for p in (message or d.reply or d.rationale, extra.strip(), outcome_text(state, outcomes)) if p]
    text = "\n\n".join(parts)
    first = state.plan_brief[0] if state.plan_brief else ""
    sit = Situation(
        user_text=user_text or "", reply=text,
        confidence=d.confidence if d.confidence is not None else state.vitals.confidence,
        vitals_confidence=state.vitals.confidence, impact=impact_of(outcomes, op_class),
        questions=[d.question] if d.question else list(state.open_questions[:1]),
        options=d.options, summary=d.rationale, next_step=first, first_step=first or d.rationale,
    )
    return policy.apply(sit).text
