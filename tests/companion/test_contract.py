"""The plan as the contract of EXECUTION, and Step × Status, rendered through the CLI's renderer."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from duckflow.channels.cli.render import Renderer
from duckflow.companion.owner import StateOwner
from duckflow.companion.state import AgentState, Status, Step
from duckflow.companion.transitions import TransitionController, TransitionTable
from duckflow.errors import ConfigError
from duckflow.llm.scripted import ScriptedModel, ScriptStep, reply, tool_call
from duckflow.llm.types import ToolCall
from tests.helpers.companion import decision


def _rendered(opened: Any) -> io.StringIO:
    buf = io.StringIO()
    opened.session.chunks.subscribe(Renderer(Console(file=buf, width=140, highlight=False), verbose=True))
    return buf


async def test_an_approved_plan_drives_execution_action_by_action(env: Any) -> None:
    model = ScriptedModel([
        decision("PLANNING", "base_main_specialized", rationale="plan two files"),
        ScriptStep(text="Plan: two files", calls=[
            ToolCall("list_files", {"path": "."}),
            ToolCall("write_file", {"path": "a.py", "content": "a = 1\n"}),
            ToolCall("write_file", {"path": "b.py", "content": "b = 2\n"})]),
        decision("EXECUTION", "base_main_specialized", rationale="the plan is ready"),
        decision("DONE", next_step="done", rationale="both written"),  # after the plan: REVIEW → DONE
    ], name="t")
    o = env.open(model)
    out = _rendered(o)
    s = o.session
    first = [c async for c in s.stream("write a.py and b.py")]
    plan = s.owner.plans.latest()
    assert plan is not None and plan.status == "executing" and first[-1].data.ending == "approval"
    assert [a.state for a in plan.action_specs] == ["done", "running", "pending"]
    assert len(model.requests) == 3, "EXECUTION ran the plan's own calls: no Specialized call"
    assert s.state.pending_job and s.state.pending_job["plan"] == {"plan_id": plan.plan_id, "index": 1}
    second = [c async for c in s.stream_answer(True, by="test")]
    assert second[-1].data.ending == "approval" and [a.state for a in plan.action_specs] == ["done", "done", "running"]
    third = [c async for c in s.stream_answer(True, by="test")]
    assert third[-1].data.ending == "done" and plan.status == "done"
    assert (env.root / "a.py").read_text() == "a = 1\n" and (env.root / "b.py").read_text() == "b = 2\n"
    text = out.getvalue()
    assert f"plan {plan.plan_id} done" in text  # the plan's progress, at --verbose
    assert any(c.type == "plan" and c.data.status == "approved" for c in first)


async def test_a_plan_without_actions_is_refused_not_accepted(env: Any) -> None:
    model = ScriptedModel([
        decision("PLANNING", "base_main_specialized", rationale="plan"),
        reply("Plan: think hard about it"), reply("Plan: still just words"),
    ], name="t")
    o = env.open(model)
    chunks = [c async for c in o.session.stream("do something")]
    assert len(o.session.owner.plans) == 0 and o.session.state.status == Status.REQUIRES_USER_INPUT
    assert "declared no actions" in model.requests[2].messages[-1].content  # asked once more
    assert any(c.type == "notice" and c.data.code == "plan_no_actions" for c in chunks)
    assert "No plan was accepted" in chunks[-1].data.text


async def test_a_deviation_from_the_plan_is_not_run_and_needs_a_re_plan(env: Any) -> None:
    guessed = ToolCall("write_file", {"path": "a.py", "content": "x"}, executable=False, confidence=0.4)
    model = ScriptedModel([
        decision("PLANNING", "base_main_specialized", rationale="plan"),
        ScriptStep(text="Plan: a.py", calls=[guessed]),
        decision("EXECUTION", "base_main_specialized", rationale="go"),
        tool_call("write_file", path="other.py", content="y"),  # not what the plan says
        decision("PLANNING", next_step="pending_user", rationale="re-plan", say="Let me re-plan."),
    ], name="t")
    o = env.open(model)
    out = _rendered(o)
    focus = o.session.state.vitals.focus
    chunks = [c async for c in o.session.stream("write a.py")]
    plan = o.session.owner.plans.latest()
    assert plan is not None and plan.status == "abandoned" and not (env.root / "other.py").exists()
    assert o.session.state.step == Step.PLANNING and o.session.state.vitals.focus < focus
    assert "Do step 1 of plan" in model.requests[3].messages[-1].content
    assert any(c.type == "notice" and c.data.code == "deviation" for c in chunks)
    assert "Let me re-plan." in out.getvalue()


def test_an_impossible_step_status_pair_is_refused_and_recorded(tmp_path: Path) -> None:
    owner = StateOwner(AgentState("s1"))
    owner.transition(Step.EXECUTION, "plan done")
    owner.new_utterance()
    owner.transition(Step.AWAITING_APPROVAL, "needs a yes")  # a decision asks IN_PROGRESS here
    assert owner.state.status == Status.REQUIRES_USER_INPUT
    assert owner.controller.refused()[-1].source == "status"
    assert owner.set_status(Status.ERROR, "boom") is False
    assert owner.state.status == Status.REQUIRES_USER_INPUT
    refused = owner.controller.refused()[-1]
    assert "impossible pair AWAITING_APPROVAL + ERROR" in refused.reason
    assert "impossible pair AWAITING_APPROVAL + ERROR" in owner.state.decision_log[-1]
    assert owner.set_status(Status.REQUIRES_USER_INPUT) is True


def test_the_status_table_is_data_and_checked_when_loaded() -> None:
    table = TransitionTable.load()
    assert table.status_allowed(Step.DONE, Status.SUCCESS) and not table.status_allowed(Step.DONE, Status.ERROR)
    custom = TransitionTable.parse('[[allow]]\nfrom = "PLANNING"\nto = "EXECUTION"\n[status]\nEXECUTION = ["SUCCESS"]\n')
    owner = StateOwner(AgentState("s2"), TransitionController(table=custom))
    owner.transition(Step.EXECUTION, "go")
    assert owner.state.status == Status.SUCCESS  # IN_PROGRESS is not allowed there by this table
    with pytest.raises(ConfigError, match="unknown status"):
        TransitionTable.parse('[status]\nPLANNING = ["SLEEPING"]\n')
