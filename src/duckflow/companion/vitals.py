"""What the vitals make the companion do (seed 001 M24: the D.U.C.K. vitals drive behaviour).

Checked at the start of every turn the task takes on its own (no new message):
- stamina low (a long task: every task turn and action costs some, a failure more) → stop,
  summarise what was done and propose a break or a smaller next step; the person's next
  message restores it (the break);
- focus low (the task drifted: a deviation from the plan, the Main decision saying its step
  is not consistent with the goal, failures, or the model's own `#f`) → restate the goal and
  re-plan from it (back to PLANNING, an open plan abandoned), then focus recovers;
- confidence low → the dialog policy asks one clarifying question sooner (policy.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from duckflow.companion.state import AgentState

LOW_STAMINA = 0.35
LOW_FOCUS = 0.4
TURN_COST = 0.03  # stamina per task turn (actions and failures cost more: state.Vitals)
REST = 0.5  # stamina back with the person's next message
REFOCUSED = 0.7


@dataclass(frozen=True)
class VitalsAction:
    kind: str  # "break" | "refocus"
    message: str


def check(state: AgentState) -> VitalsAction | None:
    """What the vitals call for before the next task turn, if anything."""
    v = state.vitals
    if v.stamina < LOW_STAMINA:
        return VitalsAction("break", break_text(state))
    if v.focus < LOW_FOCUS:
        goal = state.goal or state.task or "the task you gave me"
        return VitalsAction("refocus", f"Focus check: the goal is “{goal}”. Re-planning the next steps toward it.")
    return None


def break_text(state: AgentState) -> str:
    done = [e for e in state.evidence if "→ ok" in e][-3:]
    failed = sum(1 for e in state.evidence if "→ error" in e or "→ refused" in e)
    lines = [f"I've been at “{state.task or state.goal or 'this task'}” for a while "
             f"(stamina {state.vitals.stamina:.2f}; {state.memory.failed_operations} failed operations so far)."]
    if done:
        lines.append("Done so far: " + "; ".join(e.split(":")[0] for e in done) + ".")
    if failed:
        lines.append(f"{failed} of the latest results failed.")
    nxt = state.plan_brief[0] if state.plan_brief else ""
    lines.append("Let's pause here: take a break, or pick a smaller next step"
                 + (f" — e.g. “{nxt}”." if nxt else ".") + " Say how to go on.")
    return " ".join(lines)


def tire(state: AgentState) -> None:
    """One task turn's cost."""
    state.vitals.stamina = max(0.0, state.vitals.stamina - TURN_COST)


def rest(state: AgentState) -> None:
    """The person's message: the break."""
    state.vitals.stamina = min(1.0, state.vitals.stamina + REST)


def refocus(state: AgentState) -> None:
    state.vitals.focus = max(state.vitals.focus, REFOCUSED)
