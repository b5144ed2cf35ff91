"""The Coder's approval message carries the cost estimate (tokens of the proposal, the Coder's hint)."""

from __future__ import annotations

from typing import Any

from duckflow.llm.scripted import ScriptedModel, reply
from duckflow.llm.types import Usage

from .conftest import events_of
from .test_coder_flow import coder_json, write_app


async def test_the_approval_message_says_what_the_job_cost(make_orch: Any) -> None:
    bad = reply("not json at all", usage=Usage(900, 20))
    good = reply(coder_json(cost_hint="about $0.01"), usage=Usage(1000, 250))
    orch = make_orch({"coder3": ScriptedModel([bad, good])})
    write_app(orch.workspace)
    turn = await orch.handle("/code3 fix add() in app.py")
    assert turn.action == "approval"
    want = ("2,170 tokens to propose it (1,900 in, 270 out); applying it needs no model; "
            "the Coder's estimate: about $0.01")
    assert f"cost: {want}" in turn.text
    assert events_of(orch, "approval.requested")[0]["cost_estimate"] == want
    assert want in orch.gate.get(turn.job_id).request.impact


async def test_without_usage_or_hint_no_cost_line_is_made_up(make_orch: Any) -> None:
    orch = make_orch({"coder2": ScriptedModel([reply(coder_json(), usage=Usage(0, 0))])})
    write_app(orch.workspace)
    turn = await orch.handle("/code2 fix add() in app.py")
    assert turn.action == "approval" and "cost:" not in turn.text


async def test_a_coder_estimate_over_the_cost_limit_is_hard_required_never_auto_applied(make_orch: Any) -> None:
    from duckflow.gate import AutoApproveScope, GatePolicy

    orch = make_orch({"coder3": ScriptedModel([reply(coder_json(cost_hint="about $50"))])})
    orch.gate.policy = GatePolicy(cost_limit=1.0)  # gate.cost_limit = 1.0
    write_app(orch.workspace)
    before = (orch.workspace / "app.py").read_text()
    turn = await orch.handle("/code3 fix add() in app.py")
    assert turn.action == "approval"
    request = orch.gate.get(turn.job_id).request
    assert request.cost_estimate == 50.0 and "cost_over_limit" in request.hard_required
    answered = orch.gate.auto_answer(turn.job_id, AutoApproveScope.workspace(), by="auto-approve-workspace")
    assert isinstance(answered, str) and "cost_over_limit" in answered  # a person must decide
    assert (orch.workspace / "app.py").read_text() == before


async def test_a_coder_estimate_under_the_cost_limit_is_not_hard_required(make_orch: Any) -> None:
    from duckflow.gate import GatePolicy

    orch = make_orch({"coder3": ScriptedModel([reply(coder_json(cost_hint="$0.50 at most"))])})
    orch.gate.policy = GatePolicy(cost_limit=1.0)
    write_app(orch.workspace)
    turn = await orch.handle("/code3 fix add() in app.py")
    request = orch.gate.get(turn.job_id).request
    assert request.cost_estimate == 0.5 and "cost_over_limit" not in request.hard_required
