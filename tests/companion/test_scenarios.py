"""End-to-end companion scenarios with ScriptedModel (seed 001 §12.1 completion conditions and more)."""

from __future__ import annotations

import asyncio
from typing import Any

from duckflow.companion.state import Status, Step
from duckflow.companion.task import drive
from duckflow.llm.scripted import ScriptedModel, ScriptStep, reply, tool_call
from duckflow.llm.types import ToolCall
from tests.helpers.companion import decision

HELLO = 'print("hello")\n'


def _write_script() -> list[Any]:
    return [
        decision("EXECUTION", "base_main_specialized", rationale="write the file", goal="hello.py"),
        tool_call("write_file", path="hello.py", content=HELLO),
    ]


async def test_planning_execution_review_done(env: Any, steps_of: Any) -> None:
    o = env.open([
        decision("PLANNING", "base_main_specialized", rationale="plan first",
                 plan_brief=["write hello.py", "review it"]),
        ScriptStep(text="Plan: hello\nSteps: 1. write hello.py", calls=[ToolCall("list_files", {"path": "."})]),
        *_write_script(),
        decision("DONE", next_step="done", rationale="hello.py is written"),
    ])
    s = o.session
    r1 = await s.handle_message("make hello.py")
    assert s.state.step == Step.PLANNING and s.owner.plans.latest() is not None
    assert r1.ran_tools and s.state.plan_brief == ["write hello.py", "review it"]
    r2 = await s.continue_task(observed=True)
    assert r2.pending and s.state.step == Step.AWAITING_APPROVAL
    assert s.state.status == Status.REQUIRES_USER_INPUT
    assert "+print(\"hello\")" in r2.pending["request"]["diff_preview"]
    assert not (env.root / "hello.py").exists()  # nothing written before the person says yes
    r3 = await s.answer_approval(True)
    assert (env.root / "hello.py").read_text() == HELLO
    assert s.state.step == Step.REVIEW and s.state.status == Status.SUCCESS and r3.ran_tools
    await s.continue_task(observed=True)
    assert s.state.step == Step.DONE
    assert steps_of(o) == ["PLANNING>EXECUTION", "EXECUTION>AWAITING_APPROVAL", "AWAITING_APPROVAL>EXECUTION",
                           "EXECUTION>REVIEW", "REVIEW>DONE"]
    assert s.state.memory.files_created == ["hello.py"] and s.state.memory.successful_operations == 1


async def test_run_mode_with_workspace_auto_approve_finishes(env: Any) -> None:
    o = env.open([*_write_script(), decision("DONE", next_step="done", rationale="done")])
    out = await drive(o.session, o.session.handle_message("make hello.py"), auto_approve_workspace=True)
    assert out.success and (env.root / "hello.py").exists()
    job = o.session.runner.gate.history(1)[0]
    assert job.decision is not None and job.decision.by.startswith("auto:auto-approve-workspace")
    assert job.status == "auto_approved"  # recorded as an auto-approval, never as a person's


async def test_execution_error_returns_to_planning(env: Any) -> None:
    o = env.open([
        decision("EXECUTION", "base_main_specialized", rationale="read the config"),
        tool_call("read_file", path="missing.toml"),
    ])
    s = o.session
    r = await s.handle_message("check missing.toml")
    assert r.outcomes[0].status == "error"
    assert s.state.step == Step.PLANNING and s.state.recovery_retries == 1
    rec = s.owner.controller.history[-1]
    assert rec.source == "recovery" and rec.from_step == Step.EXECUTION
    assert s.state.vitals.confidence < 0.8


async def test_recovery_stops_at_the_retry_limit(env: Any) -> None:
    o = env.open([
        decision("EXECUTION", "base_main_specialized"), tool_call("read_file", path="nope.txt"),
        decision("EXECUTION", "base_main_specialized"), tool_call("read_file", path="nope.txt"),
        decision("EXECUTION", "base_main_specialized"), tool_call("read_file", path="nope.txt"),
    ])
    s = o.session
    s.owner.controller.max_recovery_retries = 1
    await s.handle_message("go")
    assert s.state.step == Step.PLANNING
    await s.continue_task(observed=True)  # the task retries on its own: no new recovery allowed
    assert s.state.step == Step.EXECUTION and s.state.status == Status.REQUIRES_USER_INPUT
    assert "recovery limit" in s.owner.controller.refused()[-1].reason
    await s.handle_message("the file is nope.txt, try once more")  # the person steps in: budget resets
    assert s.state.step == Step.PLANNING and s.state.recovery_retries == 1


async def test_a_file_read_works_and_feeds_the_next_prompt(env: Any) -> None:
    (env.root / "notes.md").write_text("the secret word is duck\n", encoding="utf-8")
    model = ScriptedModel([
        decision("PLANNING", "base_main_specialized", rationale="read the notes"),
        tool_call("read_file", path="notes.md"),
        decision("PLANNING", say="The word is duck."),
    ])
    o = env.open(model)
    r = await o.session.handle_message("what is in notes.md?")
    assert r.outcomes[0].status == "ok" and "duck" in r.outcomes[0].content
    await o.session.continue_task(observed=True)
    assert "the secret word is duck" in model.requests[-1].messages[0].content


async def test_denied_approval_returns_to_planning(env: Any) -> None:
    o = env.open(_write_script())
    s = o.session
    r = await s.handle_message("make hello.py")
    job_id = r.pending["job_id"]
    r2 = await s.answer_approval(False)
    assert s.state.step == Step.PLANNING and not s.state.pending_gate
    assert not (env.root / "hello.py").exists()
    assert s.runner.gate.get(job_id).status == "denied"
    assert "not run" in r2.reply


async def test_second_transition_in_one_utterance_is_refused(env: Any) -> None:
    o = env.open([
        decision("EXECUTION", rationale="start"),
        decision("REVIEW", rationale="skip ahead"),
        decision("REVIEW", rationale="now it may"),
    ])
    s = o.session
    await s.handle_message("go")
    assert s.state.step == Step.EXECUTION
    r = await s.continue_task(observed=False)  # no new utterance, no tool results
    assert s.state.step == Step.EXECUTION
    assert [c.type for c in r.chunks if c.type == "state" and not c.data.allowed] == ["state"]
    assert "per utterance" in s.owner.controller.refused()[-1].reason
    await s.handle_message("please review")
    assert s.state.step == Step.REVIEW


async def test_restart_mid_task_restores_state_and_pending_approval(env: Any) -> None:
    first = env.open(_write_script())
    r = await first.session.handle_message("make hello.py")
    sid, job_id = first.session.state.session_id, r.pending["job_id"]
    first.close()  # the process ends here (state was written after every change)
    env.opened.clear()
    again = env.open([decision("DONE", next_step="done")], session_id=sid)
    s = again.session
    assert again.resumed and s.state.step == Step.AWAITING_APPROVAL
    assert s.state.pending_gate and s.state.pending_job["job_id"] == job_id
    assert s.state.goal == "hello.py"
    assert any(rec.to_step == Step.AWAITING_APPROVAL for rec in s.owner.controller.history)
    await s.answer_approval(True)
    assert (env.root / "hello.py").read_text() == HELLO and s.state.step == Step.REVIEW


async def test_approval_given_elsewhere_is_picked_up_on_resume(env: Any) -> None:
    first = env.open(_write_script())
    r = await first.session.handle_message("make hello.py")
    first.session.runner.gate.grant(r.pending["job_id"], by="duckflow approvals")
    again = env.open([], resume=True)
    res = await again.session.resume_pending()
    assert res is not None and (env.root / "hello.py").exists()


async def test_guessed_calls_are_proposed_never_run(env: Any) -> None:
    guessed = ToolCall("write_file", {"path": "x.py", "content": "x"}, executable=False, source="symops")
    o = env.open([decision("EXECUTION", "base_main_specialized"), ScriptStep(calls=[guessed])])
    r = await o.session.handle_message("go")
    assert r.outcomes[0].status == "proposed" and not (env.root / "x.py").exists()
    assert not r.pending


async def test_broken_main_json_is_repaired(env: Any) -> None:
    o = env.open([reply('```json\n{"rationale": "hi", "goal_consistency": "yes", "constraint_check": "yes",'
                        ' "next_step": "pending_user", "step": "PLANNING", "reply": "Hello!",}\n```')])
    r = await o.session.handle_message("hi")
    assert r.decision is not None and r.decision.reply == "Hello!" and "Hello!" in r.reply
    assert any(c.type == "notice" and "repaired" in c.data.message for c in r.chunks)


async def test_broken_main_json_twice_ends_in_the_safe_default(env: Any) -> None:
    model = ScriptedModel([reply("I will now write all files!"), reply("{not json at all")])
    o = env.open(model)
    r = await o.session.handle_message("do everything")
    assert len(model.requests) == 2  # one re-ask, no Specialized call
    assert o.session.state.step == Step.PLANNING and r.outcomes == []
    assert "could not be read" in r.reply and r.next_step == "pending_user"


async def test_budget_cuts_are_reported_in_a_turn(env: Any) -> None:
    from duckflow.prompts.budget import LayerBudget

    o = env.open([decision("PLANNING")])
    o.session.budget = LayerBudget(10_000, 200, 10_000)
    o.session.owner.change("evidence", lambda s: [s.add_evidence("read_file big → " + "y" * 250) for _ in range(5)])
    r = await o.session.handle_message("hi")
    notices = [c for c in r.chunks if c.type == "notice" and "prompt budget" in c.data.message]
    assert notices and notices[0].data.details["cuts"][0].startswith("evidence")


async def test_cancel_during_a_task_stops_it_cleanly(env: Any) -> None:
    from duckflow.companion.dualloop import DualLoop

    started = asyncio.Event()

    async def slow(messages: list[Any]) -> Any:
        started.set()
        await asyncio.sleep(30)
        return decision("EXECUTION")

    o = env.open(ScriptedModel([slow]))
    loop = DualLoop(o.session)
    loop.start_message("a long job")
    await asyncio.wait_for(started.wait(), 5)
    assert loop.busy and "working" in loop.status_text()
    assert await loop.cancel(timeout=5)
    assert not loop.busy
    s = o.session.state
    assert s.status == Status.REQUIRES_USER_INPUT and "cancelled" in s.decision_log[-1]
    saved = o.store.load(s.session_id)
    assert saved is not None and "cancelled" in saved[0].decision_log[-1]


async def test_dual_loop_answers_while_the_task_runs_and_the_task_sees_new_constraints(env: Any) -> None:
    from duckflow.companion.dualloop import DualLoop

    release, started = asyncio.Event(), asyncio.Event()

    async def first(messages: list[Any]) -> Any:
        started.set()
        await asyncio.wait_for(release.wait(), 5)
        return decision("EXECUTION", "base_main_specialized", rationale="list first")

    model = ScriptedModel([first, tool_call("list_files", path="."), decision("EXECUTION", next_step="pending_user")])
    o = env.open(model)
    loop = DualLoop(o.session)
    task = loop.start_message("tidy up")
    await asyncio.wait_for(started.wait(), 5)
    assert "working" in loop.status_text()  # the chat side answers at once
    loop.add_constraint("never touch setup.py")
    release.set()
    outcome = await asyncio.wait_for(task, 5)
    assert outcome.ending == "input"
    assert "never touch setup.py" in model.requests[1].messages[0].content  # the task saw it
    assert "never touch setup.py" in model.requests[2].messages[0].content


async def test_a_failing_model_call_keeps_the_state_and_says_so(env: Any) -> None:
    from duckflow.llm.errors import LLMTimeoutError
    from duckflow.llm.scripted import fail

    o = env.open([decision("EXECUTION", "base_main_specialized"), fail(LLMTimeoutError("slow", provider="x"))])
    r = await o.session.handle_message("go")
    assert "call failed" in r.reply and o.session.state.status == Status.REQUIRES_USER_INPUT
    assert any(c.type == "error" and c.data.code == "model_error" for c in r.chunks)
    o2 = env.open([fail(LLMTimeoutError("slow", provider="x"))])
    r2 = await o2.session.handle_message("hi")
    assert "model call failed" in r2.reply and o2.session.state.step == Step.PLANNING


async def test_several_calls_each_wait_for_their_own_approval(env: Any) -> None:
    from duckflow.llm.scripted import tool_calls

    o = env.open([
        decision("EXECUTION", "base_main_specialized", rationale="two files"),
        tool_calls([("list_files", {"path": "."}), ("write_file", {"path": "a.py", "content": "a\n"}),
                    ("write_file", {"path": "b.py", "content": "b\n"})]),
    ])
    s = o.session
    r = await s.handle_message("write a and b")
    assert [x.status for x in r.outcomes] == ["ok", "pending"]
    assert any("list_files" in e for e in s.state.evidence)  # what ran before the approval counts
    r2 = await s.answer_approval(True)
    assert (env.root / "a.py").exists() and r2.pending and r2.pending["call"]["arguments"]["path"] == "b.py"
    await s.answer_approval(True)
    assert (env.root / "b.py").exists() and s.state.step == Step.REVIEW
    assert s.state.memory.files_created == ["a.py", "b.py"]


async def test_a_failed_read_while_planning_is_evidence_not_an_error(env: Any) -> None:
    o = env.open([decision("PLANNING", "base_main_specialized"), tool_call("read_file", path="nope.md")])
    r = await o.session.handle_message("plan")
    assert r.outcomes[0].status == "error"
    assert o.session.state.step == Step.PLANNING and o.session.state.status == Status.IN_PROGRESS
    assert any("nope.md" in e for e in o.session.state.evidence)


async def test_files_read_earlier_are_attached_to_the_specialized_call(env: Any) -> None:
    (env.root / "app.py").write_text("def main():\n    return 1\n" + "# pad\n" * 2000, encoding="utf-8")
    model = ScriptedModel([
        decision("PLANNING", "base_main_specialized"), tool_call("read_file", path="app.py"),
        decision("EXECUTION", "base_main_specialized"), ScriptStep(text="nothing to do"),
    ])
    o = env.open(model)
    await o.session.handle_message("look at app.py")
    await o.session.continue_task(observed=True)
    request = model.requests[3].messages[-1].content
    assert "--- app.py ---\ndef main():\n    return 1" in request and "more characters not shown" in request


async def test_auto_approve_never_covers_a_delete(env: Any) -> None:
    (env.root / "old.txt").write_text("keep me\n", encoding="utf-8")
    o = env.open([decision("EXECUTION", "base_main_specialized"), tool_call("delete_path", path="old.txt")])
    out = await drive(o.session, o.session.handle_message("delete old.txt"), auto_approve_workspace=True)
    assert out.ending == "approval" and "delete" in out.message
    assert (env.root / "old.txt").exists()


async def test_a_write_outside_the_workspace_is_refused_and_recovered_from(env: Any) -> None:
    o = env.open([decision("EXECUTION", "base_main_specialized"),
                  tool_call("write_file", path="../escape.txt", content="x")])
    r = await o.session.handle_message("write outside")
    assert r.outcomes[0].status == "refused" and not (env.root.parent / "escape.txt").exists()
    assert o.session.state.step == Step.PLANNING  # error recovery


async def test_writes_proposed_while_planning_become_action_specs_not_runs(env: Any) -> None:
    from duckflow.llm.scripted import tool_calls

    o = env.open([decision("PLANNING", "base_main_specialized"),
                  tool_calls([("list_files", {"path": "."}), ("write_file", {"path": "p.py", "content": "x"})],
                             text="Plan: p\nSteps: 1. write p.py")])
    r = await o.session.handle_message("plan p.py")
    plan = o.session.owner.plans.latest()
    assert plan is not None and [(a.kind, a.path, a.state) for a in plan.action_specs] == [
        ("read", ".", "done"), ("create", "p.py", "pending")]  # the read ran while planning
    assert [x.call.name for x in r.outcomes] == ["list_files"] and not (env.root / "p.py").exists()
    assert o.session.state.plan_id == plan.plan_id


async def test_a_workspace_swapped_for_a_link_mid_session_is_not_followed(env: Any, tmp_path: Any) -> None:
    """The session keeps one WorkspaceGuard (its root resolved once): when the root folder is
    replaced by a link to another folder, neither the five points' reads nor the gate's
    operation see through it — reads give nothing, a write is refused, nothing lands outside."""
    o = env.open([decision("EXECUTION", "base_main_specialized"),
                  tool_call("write_file", path="a.txt", content="x")])
    runner = o.session.runner
    (env.root / "a.txt").write_text("inside\n", encoding="utf-8")
    assert runner.read_text("a.txt") == "inside\n"  # the guard is made and kept
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.txt").write_text("secret\n", encoding="utf-8")
    env.root.rename(tmp_path / "moved")
    env.root.symlink_to(outside, target_is_directory=True)
    assert runner.read_text("a.txt") is None
    r = await o.session.handle_message("write a.txt")
    assert r.outcomes and r.outcomes[0].status in ("refused", "error")
    assert (outside / "a.txt").read_text(encoding="utf-8") == "secret\n"
