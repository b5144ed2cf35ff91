"""The vitals drive behaviour (seed 001 M24), seen through the CLI's renderer."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console

from duckflow.channels.cli.render import Renderer
from duckflow.companion.state import Status, Step
from duckflow.companion.task import drive
from duckflow.llm.scripted import ScriptedModel, reply, tool_call
from tests.helpers.companion import decision


def _rendered(opened: Any) -> io.StringIO:
    buf = io.StringIO()
    opened.session.chunks.subscribe(Renderer(Console(file=buf, width=140, highlight=False), verbose=True))
    return buf


async def test_a_long_failing_task_tires_and_the_companion_proposes_a_break(env: Any) -> None:
    steps: list[Any] = []
    for i in range(30):  # the model keeps reading files that are not there
        steps += [decision("EXECUTION", "base_main_specialized", rationale=f"look again {i}"),
                  tool_call("read_file", path=f"missing{i}.py")]
    model = ScriptedModel(steps, name="t")
    o = env.open(model)
    out = _rendered(o)
    s = o.session
    s.owner.controller.max_recovery_retries = 100  # keep going: only the stamina stops it
    outcome = await drive(s, s.handle_message("find the config loader"), max_turns=40)
    assert outcome.ending == "input" and s.state.vitals.stamina < 0.35
    assert "take a break, or pick a smaller next step" in outcome.message
    assert s.state.status == Status.REQUIRES_USER_INPUT and len(model.requests) < len(steps)
    assert "take a break, or pick a smaller next step" in out.getvalue()
    before = s.state.vitals.stamina
    model.add(decision("PLANNING", next_step="pending_user", say="OK, smaller: just list the folder."))
    await s.handle_message("ok, smaller step please")
    assert s.state.vitals.stamina > before  # the break


async def test_low_focus_restates_the_goal_and_re_plans(env: Any) -> None:
    model = ScriptedModel([
        decision("EXECUTION", "base_main_specialized", rationale="write", goal="a CSV exporter"),
        reply("(no call yet)"),  # (a read would end the step: reads done are reviewed)
        decision("PLANNING", next_step="pending_user", rationale="re-plan", say="Re-planning the exporter."),
    ], name="t")
    (env.root / "notes.txt").write_text("x\n")
    o = env.open(model)
    _rendered(o)
    s = o.session
    await s.handle_message("export the report as CSV")
    s.owner.change("drifted", lambda st: (st.vitals.drift(), st.vitals.drift()))  # e.g. two deviations
    assert s.state.vitals.focus < 0.4 and s.state.step == Step.EXECUTION
    r = await s.continue_task(observed=True)
    asked = model.requests[-1].messages[-1].content
    assert "Focus check: the goal is “a CSV exporter”" in asked and "Re-planning" in asked
    assert s.state.step == Step.PLANNING and s.state.vitals.focus >= 0.7
    assert r.reply.startswith("Re-planning the exporter.")


async def test_a_decision_saying_it_does_not_serve_the_goal_lowers_focus(env: Any) -> None:
    import json

    from duckflow.llm.scripted import reply

    off = reply(json.dumps({"reply": "hm", "rationale": "side quest", "goal_consistency": "no: unrelated",
                            "constraint_check": "yes", "next_step": "pending_user", "step": "PLANNING"}))
    o = env.open([off])
    focus = o.session.state.vitals.focus
    await o.session.handle_message("go")
    assert o.session.state.vitals.focus < focus
