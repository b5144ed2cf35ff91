"""Coder → approval → Worker (seed 003 §5.1, §6.2): the Coder proposes, the gate asks, the Worker applies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from duckflow.llm.scripted import ScriptedModel, reply
from duckflow.orchestra.orchestrator import read_delegation

from .conftest import events_of, worker_json

PATCH = "\n".join(["--- a/app.py", "+++ b/app.py", "@@ -1,3 +1,3 @@", " def add(a, b):", "-    return a - b",
                   "+    return a + b", " ", ""])

def coder_json(patch: str = PATCH, **over: Any) -> str:
    data = {"job_id": "c-1", "plan": "fix the sign in add()", "patch": patch, "risk": "low: one line",
            "need_approval": True, **over}
    return "Here you go:\n```json\n" + json.dumps(data) + "\n```"


def write_app(ws: Path) -> Path:
    app = ws / "app.py"
    app.write_text("def add(a, b):\n    return a - b\n\nprint(add(1, 2))\n", encoding="utf-8")
    return app


async def test_coder_proposes_the_gate_asks_and_the_worker_applies_after_approval(make_orch: Any) -> None:
    coder = ScriptedModel([reply(coder_json())])
    orch = make_orch({"coder2": coder})
    app = write_app(orch.workspace)
    turn = await orch.handle("/code2 fix add() in app.py")
    assert turn.action == "approval" and turn.job_id and turn.declaration
    assert "return a - b" in app.read_text()  # nothing ran before the approval
    assert "=== app.py ===" in coder.requests[0].messages[-1].content  # the Coder saw the file
    assert orch.gate.get(turn.job_id).status == "pending"
    text = await orch.answer(turn.job_id, True, approver="tester")
    assert "changed app.py" in text and "return a + b" in app.read_text()
    types = [e["type"] for e in events_of(orch)]
    assert types[1:] == ["coder.plan_generated", "approval.requested", "final.route", "approval.granted",
                         "worker.success"]
    granted = events_of(orch, "approval.granted")[0]
    assert granted["approver"] == "tester" and granted["approval_status"] == "granted" and granted["job_id"] == turn.job_id
    requested = events_of(orch, "approval.requested")[0]
    assert requested["coder_output"]["plan"] == "fix the sign in add()" and requested["approval_requested_at"]


async def test_denied_job_changes_nothing(make_orch: Any) -> None:
    orch = make_orch({"coder1": ScriptedModel([reply(coder_json())])})
    app = write_app(orch.workspace)
    turn = await orch.handle("/code1 fix app.py")
    text = await orch.answer(turn.job_id, False, approver="tester")
    assert "denied" in text and "return a - b" in app.read_text()
    assert events_of(orch, "approval.denied")[0]["approval_status"] == "denied"


async def test_a_patch_escaping_the_workspace_or_broken_is_refused(make_orch: Any) -> None:
    bad = PATCH.replace("a/app.py", "a/../../etc/passwd").replace("b/app.py", "b/../../etc/passwd")
    orch = make_orch({"coder1": ScriptedModel([reply(coder_json(bad)), reply("no json here")])})
    turn = await orch.handle("/code1 do it")
    assert turn.action == "reply" and "could not propose" in turn.text and orch.gate.pending() == []


async def test_code_under_local_only_never_calls_the_coder(make_orch: Any) -> None:
    coder = ScriptedModel([reply(coder_json())], is_local=False)
    orch = make_orch({"coder1": coder})
    await orch.handle("/local")
    turn = await orch.handle("/code1 fix app.py")
    assert turn.action == "notice" and "/cloud" in turn.text and coder.requests == []


async def test_line_starts_at_chat_and_chat_delegates_with_delegate_and_task(make_orch: Any) -> None:
    chat = ScriptedModel([reply("いいよ！\n**DELEGATE:** PLAN\nTASK: 旅行の段取りを作る")])
    worker = ScriptedModel([reply(worker_json("1日目: 移動"))])
    orch = make_orch({"chat": chat, "worker": worker}, channel="line", companion=False)
    turn = await orch.handle("/plan 旅行の計画を立てて")  # a command on LINE still starts at CHAT
    assert turn.decision.primary_route == "CHAT" and turn.action == "reply" and "1日目" in turn.text
    assert "旅行の段取りを作る" in worker.requests[0].messages[-1].content
    assert [e["source"] for e in events_of(orch, "route.override")] == ["chat_delegate"]
    assert read_delegation("DELEGATE: dance\nTASK: x") is None
    assert read_delegation("delegate： code3\ntask: fix it") == ("CODE3", "fix it")


async def test_chat_proposal_reroutes_once(make_orch: Any) -> None:
    chat = ScriptedModel([reply('{"propose_next_loop": true, "route": "RESEARCH", "reason": "needs sources", '
                                '"confidence": 0.9}')])
    worker = ScriptedModel([reply(worker_json("found", fit=False, suggested_route="PLAN"))])
    orch = make_orch({"chat": chat, "worker": worker}, channel="slack", companion=False)
    turn = await orch.handle("tell me about it")
    assert turn.loop is not None and turn.loop.final_route == "RESEARCH" and turn.loop.reroute_used
    assert len(events_of(orch, "route.override")) == 1  # the worker's fit=false found the budget used


async def test_local_only_stays_in_its_own_channel_and_session(make_orch: Any) -> None:
    line = make_orch({}, channel="line", companion=False, session="u1")
    await line.handle("/local")
    cli = make_orch({}, channel="cli", session="u1")
    assert not (await cli.route("hello")).flags.local_only
    assert (await line.route("hello")).flags.local_only


async def test_non_target_channels_see_no_side_effects(make_orch: Any) -> None:
    """The CLI (not a seed 003 target channel) keeps its behaviour: CHAT and CODE text reach the companion
    unchanged, nothing is declared for CHAT, and a LINE session's /local does not reach it."""
    line = make_orch({}, channel="line", companion=False, session="same-id")
    await line.handle("/local")
    cli = make_orch({}, channel="cli", session="same-id")
    chat = await cli.handle("hello there")
    code = await cli.handle("Create hello.py that prints hi")
    assert (chat.action, chat.text, chat.declaration) == ("companion", "hello there", "")
    assert (code.action, code.text) == ("companion", "Create hello.py that prints hi") and code.declaration
    assert not code.decision.flags.local_only
    assert [e["type"] for e in events_of(cli) if e["channel"] == "cli"] == ["router.decision", "final.route"] * 2


async def test_coder3_gets_its_limits_and_retries_a_bad_reply(make_orch: Any) -> None:
    coder3 = ScriptedModel([reply("no json, sorry"), reply("still prose"), reply(coder_json())])
    orch = make_orch({"coder3": coder3})
    write_app(orch.workspace)
    turn = await orch.handle("/code3 fix app.py")
    assert turn.action == "approval" and len(coder3.requests) == 3  # 1 call + retry_max 2
    settings = coder3.requests[0].settings
    assert settings is not None and settings.max_tokens == 16000 and settings.timeout_s == 60.0


async def test_on_channels_chat_writes_the_final_answer_and_may_propose_one_more_loop(make_orch: Any) -> None:
    chat = ScriptedModel([reply("DELEGATE: ANALYZE\nTASK: sum the numbers"), reply("合計は42だよ！")])
    worker = ScriptedModel([reply(worker_json("sum = 42"))])
    turn = await make_orch({"chat": chat, "worker": worker}, channel="line", companion=False).handle("足して")
    assert turn.text == "合計は42だよ！" and "sum = 42" in chat.requests[1].messages[0].content

    proposing = ScriptedModel([reply('{"propose_next_loop": true, "route": "RESEARCH", "reason": "needs sources", '
                                     '"confidence": 0.8}')])
    worker = ScriptedModel([reply(worker_json("draft plan")), reply(worker_json("sources: a, b"))])
    orch = make_orch({"chat": proposing, "worker": worker}, channel="slack", companion=False, session="s9")
    turn = await orch.handle("/plan the study")
    assert turn.loop is not None and turn.loop.final_route == "RESEARCH" and turn.text.startswith("sources")
    assert [e["source"] for e in events_of(orch, "route.override")] == ["chat_propose"]
