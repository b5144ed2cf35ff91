"""Marks a plan's actions from what became of their calls: done or failed when they ran, denied
(with the person's words) when the person said no — a denied action is never left `pending`,
and a repeat of exactly it is refused (steps.py, replycheck.py) until the person asks for it again."""

from __future__ import annotations

from typing import Any

from duckflow.companion.plan import specs_for_calls
from duckflow.llm.types import ToolCall
from duckflow.toolkinds import KINDS


def same_call(call: ToolCall, spec_call: dict[str, Any] | None) -> bool:
    """`call` is exactly the call a plan action stands for (same tool, same arguments)."""
    if not spec_call:
        return False
    return call.name == spec_call.get("name") and dict(call.arguments) == dict(spec_call.get("arguments") or {})


def mark_ran(session: Any, ran: list[Any]) -> None:
    """A plan that no plan run drives (single-call): each call that ran marks its action."""
    from duckflow.companion.runresult import failed_run

    plan = session.owner.plans.latest()
    if plan is None or plan.status != "proposed":
        return
    for o in ran:
        i = next((i for i in plan.pending() if same_call(o.call, plan.action_specs[i].call)), None)
        if i is not None:
            session._mark(plan, i, "done" if o.status == "ok" and not failed_run(o.content) else "failed")


def mark_denied(session: Any, call: ToolCall, words: str) -> None:
    """The denied action is marked denied in the plan (added when the plan did not hold it),
    with the person's words as its description."""
    plans = session.owner.plans
    plan = plans.latest()
    if plan is None:
        plan = plans.get(plans.propose(f"denied: {call.name}"))
        session.owner.change("plan", lambda s: setattr(s, "plan_id", plan.plan_id))
    i = next((i for i, a in enumerate(plan.action_specs) if a.state in ("pending", "running", "skipped", "denied")
              and same_call(call, a.call)), None)
    if i is None:
        i = plans.add_action(plan.plan_id, specs_for_calls([call])[0])
    plan.action_specs[i].description = (f"their words: {words}" if words else "no reason given")[:200]
    session._mark(plan, i, "denied")
    session._plan_chunk(plan)


def lift_denials(session: Any, text: str) -> None:
    """The person asks again for what they said no to (their new message names its file): the
    denial no longer refuses it — the gate asks them again, as for any change."""
    from pathlib import PurePosixPath

    for plan in list(session.owner.plans._plans.values()):
        for i, a in enumerate(plan.action_specs):
            path = str((a.call or {}).get("arguments", {}).get("path") or a.path or "")
            if a.state == "denied" and path and (path in text or PurePosixPath(path).name in text.split()):
                a.description = "asked for again"
                session._mark(plan, i, "skipped")


def action_words(call: ToolCall) -> str:
    """A call in a person's words: `write hello.py`, `run python3 app.py`."""
    verb = {"write": "write", "edit": "edit", "execute": "run", "test": "run the tests", "delete": "delete",
            "rename": "move", "mkdir": "create the folder"}.get(KINDS.get(call.name, ""), call.name.replace("_", " "))
    return f"{verb} {call.arguments.get('path') or call.arguments.get('command') or ''}".strip()


def repeat_words(call: ToolCall, spec: Any) -> str:
    """What a person reads when the model proposes again what they said no to."""
    said = spec.description.removeprefix("their words: ")
    return f"{action_words(call)} again — you said no to it" + (f" (“{said}”)" if said != "no reason given" else "")
