"""Loop control (seed 003 §3, §11): reroute at most once, worker JSON broken, risk=high, limits, events."""

from __future__ import annotations

from typing import Any

from duckflow.config import load_config
from duckflow.llm.scripted import ScriptedModel, reply
from duckflow.orchestra.contracts import read_worker_output
from duckflow.orchestra.loop import LoopController
from duckflow.orchestra.roles import Roles

from .conftest import events_of, worker_json


async def test_worker_routes_run_the_worker_and_record_the_stop_reason(make_orch: Any) -> None:
    worker = ScriptedModel([reply(worker_json("1. freeze 2. tag 3. ship"))])
    orch = make_orch({"worker": worker})
    turn = await orch.handle("リリースの段取りを考えて")
    assert turn.action == "reply" and "freeze" in turn.text and turn.declaration
    assert turn.loop is not None and turn.loop.stop_reason == "done"
    stop = events_of(orch, "loop.stop")[-1]
    assert stop["initial_route"] == stop["final_route"] == "PLAN" and stop["worker_calls"] == 1
    assert {"classifier_route", "classifier_confidence", "needs_next_loop", "risk", "fit", "reroute_used",
            "stop_reason", "error_reason"} <= set(stop)
    assert [e["type"] for e in events_of(orch)] == ["router.decision", "worker.success", "loop.stop", "final.route"]


async def test_reroute_happens_at_most_once(make_orch: Any) -> None:
    worker = ScriptedModel([
        reply(worker_json("not mine", fit=False, suggested_route="ANALYZE", needs_next_loop=True)),
        reply(worker_json("still not mine", fit=False, suggested_route="RESEARCH", needs_next_loop=True)),
        reply(worker_json("ok then")),
    ])
    orch = make_orch({"worker": worker})
    turn = await orch.handle("/plan the data cleanup")
    assert turn.loop is not None
    assert turn.loop.reroute_used and turn.loop.final_route == "ANALYZE"
    assert len(events_of(orch, "route.override")) == 1
    assert turn.loop.stop_reason == "done" and turn.loop.worker_calls == 3


async def test_broken_worker_json_is_a_failed_worker_that_does_not_loop(make_orch: Any) -> None:
    worker = ScriptedModel([reply("I think the plan is fine {not json"), reply(worker_json())])
    orch = make_orch({"worker": worker})
    turn = await orch.handle("/analyze the logs")
    assert turn.loop is not None and turn.loop.stop_reason == "worker_failed" and turn.loop.worker_calls == 1
    fail = events_of(orch, "worker.fail")[0]
    assert fail["needs_next_loop"] is False and "not valid JSON" in fail["error_reason"]
    out = read_worker_output("```json\n{\"result\": \"x\", \"needs_next_loop\": true}\n```")
    assert not out.ok and out.needs_next_loop is False


async def test_risk_high_stops_for_confirmation(make_orch: Any) -> None:
    worker = ScriptedModel([reply(worker_json("drop the table", risk="high", needs_next_loop=True)),
                            reply(worker_json())])
    orch = make_orch({"worker": worker})
    turn = await orch.handle("/ops clean the production database")
    assert turn.loop is not None and turn.loop.stop_reason == "need_user_confirmation"
    assert turn.loop.worker_calls == 1 and "confirm" in turn.text
    assert events_of(orch, "loop.stop")[-1]["error_reason"] == "risk=high"


async def test_questions_and_limits_stop_the_loop(make_orch: Any) -> None:
    asks = ScriptedModel([reply(worker_json("need more", questions=["which server?"], needs_next_loop=True))])
    turn = await make_orch({"worker": asks}).handle("/ops restart it")
    assert turn.loop is not None and turn.loop.stop_reason == "need_user_confirmation" and "which server?" in turn.text
    forever = ScriptedModel([reply(worker_json(f"pass {i}", needs_next_loop=True)) for i in range(5)])
    turn = await make_orch({"worker": forever}, session="s2").handle("/research more and more")
    assert turn.loop is not None and turn.loop.stop_reason == "max_loops" and turn.loop.worker_calls == 3


async def test_max_millis_stops_the_loop() -> None:
    now = [0.0]

    def clock() -> float:
        now[0] += 50.0  # 50 s pass between two looks at the clock
        return now[0]

    cfg = load_config(env={})
    worker = ScriptedModel([reply(worker_json(needs_next_loop=True)) for _ in range(3)])
    events: list[str] = []
    ctl = LoopController(Roles(cfg, models={"worker": worker}), cfg.loop, emit=lambda t, *a, **k: events.append(t),
                         clock=clock)
    res = await ctl.run("PLAN", "x", session_id="s", local_only=False)
    assert res.stop_reason == "max_millis" and res.worker_calls == 1
    assert events[-2:] == ["loop.stop", "final.route"]


async def test_cloud_worker_is_refused_for_non_code_routes_and_under_local_only(make_orch: Any) -> None:
    cloud = ScriptedModel([reply(worker_json())], is_local=False)
    orch = make_orch({"worker": cloud})
    turn = await orch.handle("/plan the trip")
    assert turn.loop is not None and turn.loop.stop_reason == "worker_failed" and "cloud" in (turn.loop.error_reason or "")
    assert cloud.requests == []
