"""The single owner of the state: change callbacks, persistence after every change (a turn's at its
flush points), crash safety."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from duckflow.companion.owner import StateOwner
from duckflow.companion.state import AgentState, Status, Step
from duckflow.companion.store import SessionStore


def test_every_change_is_announced_and_saved(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "s.db")
    owner = StateOwner(AgentState("s1"), store=store)
    seen: list[tuple[str, str]] = []
    owner.add_listener(lambda s, what: seen.append((s.step.value, what)))
    owner.add_listener(lambda s, what: 1 / 0)  # a broken listener does not break the conversation
    owner.change("goal", lambda s: s.set_goal("ship it"))
    rec = owner.transition(Step.EXECUTION, "plan done")
    assert rec.allowed and seen[-1][0] == "EXECUTION" and seen[0][1] == "goal"
    loaded = SessionStore(tmp_path / "s.db").load("s1")
    assert loaded is not None and loaded[0].goal == "ship it" and loaded[0].step == Step.EXECUTION
    assert loaded[1]["transitions"][-1]["to"] == "EXECUTION"
    refused = owner.transition(Step.REVIEW, "again in the same utterance")
    assert not refused.allowed and owner.state.step == Step.EXECUTION
    assert SessionStore(tmp_path / "s.db").load("s1")[1]["transitions"][-1]["allowed"] is False  # type: ignore[index]


def test_a_killed_process_leaves_the_state_of_its_last_change(tmp_path: Path) -> None:
    script = textwrap.dedent(f"""
        import os
        from duckflow.companion.owner import StateOwner
        from duckflow.companion.state import AgentState, Status, Step
        from duckflow.companion.store import SessionStore
        owner = StateOwner(AgentState("crash"), store=SessionStore({str(tmp_path / "s.db")!r}))
        owner.change("goal", lambda s: s.set_goal("survive a crash"))
        owner.transition(Step.EXECUTION, "go")
        def pending(s):
            s.pending_gate, s.pending_job = True, {{"job_id": "j1", "summary": "write a.py"}}
        owner.change("approval pending", pending)
        owner.set_status(Status.REQUIRES_USER_INPUT)
        os._exit(9)  # no close, no flush: the process dies here
    """)
    proc = subprocess.run([sys.executable, "-c", script], timeout=60)
    assert proc.returncode == 9
    loaded = SessionStore(tmp_path / "s.db").load("crash")
    assert loaded is not None
    state = loaded[0]
    assert state.goal == "survive a crash" and state.step == Step.EXECUTION
    assert state.pending_gate and state.pending_job == {"job_id": "j1", "summary": "write a.py"}
    assert state.status == Status.REQUIRES_USER_INPUT


def _stored(path: Path, session_id: str) -> dict[str, object]:
    loaded = SessionStore(path).load(session_id)
    assert loaded is not None
    return loaded[0].to_dict()


def test_changes_in_a_coalesced_block_are_written_at_flush_and_at_its_end(tmp_path: Path) -> None:
    import pytest

    db = tmp_path / "s.db"
    owner = StateOwner(AgentState("s1"), store=SessionStore(db))
    owner.persist()
    writes: list[str] = []
    save = owner.store.save  # type: ignore[union-attr]
    owner.store.save = lambda *a: (writes.append("w"), save(*a))[1]  # type: ignore[union-attr,method-assign]
    seen: list[str] = []
    owner.add_listener(lambda s, what: seen.append(what))
    with owner.coalesced():
        owner.change("goal", lambda s: s.set_goal("ship it"))
        owner.change("constraint", lambda s: s.add_constraint("no network"))
        assert seen == ["goal", "constraint"]  # listeners still hear every change at once
        assert _stored(db, "s1")["goal"] == "" and writes == []  # not written yet
        owner.flush()
        assert _stored(db, "s1") == owner.state.to_dict() and writes == ["w"]
        owner.flush()  # nothing new: no write
        assert writes == ["w"]
        owner.transition(Step.EXECUTION, "go")
    assert _stored(db, "s1") == owner.state.to_dict() and writes == ["w", "w"]
    with pytest.raises(RuntimeError), owner.coalesced():  # an error ends the block: still written
        owner.change("why", lambda s: s.set_why_now("the release"))
        raise RuntimeError("boom")
    assert _stored(db, "s1")["why_now"] == "the release"
    owner.change("outside", lambda s: s.set_goal("written at once"))  # no block: one write each, as before
    assert _stored(db, "s1")["goal"] == "written at once"


async def test_another_tasks_change_is_written_at_once_during_a_coalesced_turn(tmp_path: Path) -> None:
    import asyncio

    db = tmp_path / "s.db"
    owner = StateOwner(AgentState("s1"), store=SessionStore(db))
    go, inside = asyncio.Event(), asyncio.Event()

    async def turn() -> None:
        with owner.coalesced():
            owner.change("goal", lambda s: s.set_goal("deferred"))
            inside.set()
            await go.wait()

    task = asyncio.create_task(turn())
    await inside.wait()
    assert SessionStore(db).load("s1") is None  # the turn's change is not written yet
    owner.change("constraint", lambda s: s.add_constraint("typed meanwhile"))  # the chat loop: not deferred
    assert _stored(db, "s1")["constraints"] == ["typed meanwhile"]
    task.cancel()  # a cancelled turn still writes what it changed
    await asyncio.gather(task, return_exceptions=True)
    owner.change("goal-2", lambda s: None)
    assert _stored(db, "s1") == owner.state.to_dict()


async def test_at_every_tool_run_approval_and_turn_end_the_store_holds_the_state(env: object) -> None:
    """A whole task (plan, approval, write, review, done): whenever the session is about to run
    a tool, the stored state is the state in memory; an approval is stored as soon as it is
    asked (before the turn goes on to its reply); after each turn the store holds the state;
    and a turn writes fewer times than it changes the state."""
    from typing import Any

    from duckflow.llm.scripted import ScriptStep, tool_call
    from duckflow.llm.types import ToolCall
    from tests.helpers.companion import decision

    e: Any = env
    o = e.open([
        decision("PLANNING", "base_main_specialized", rationale="plan first", plan_brief=["write hello.py"]),
        ScriptStep(text="Plan: hello\nSteps: 1. write hello.py", calls=[ToolCall("list_files", {"path": "."})]),
        decision("EXECUTION", "base_main_specialized", rationale="write the file"),
        tool_call("write_file", path="hello.py", content="print('hi')\n"),
        decision("DONE", next_step="done", rationale="hello.py is written"),
    ])
    s = o.session
    db = e.home / "sessions.db"
    sid = s.state.session_id
    checked: list[str] = []
    flush = s.runner.before_run

    def check() -> None:
        flush()
        assert _stored(db, sid) == s.state.to_dict()
        checked.append(s.state.step.value)

    s.runner.before_run = check
    pending_at_reply: list[object] = []
    reply = s._reply

    def replying(text: str) -> None:  # the turn's last step before its end: the approval is stored by now
        pending_at_reply.append(_stored(db, sid)["pending_gate"])
        reply(text)

    s._reply = replying  # type: ignore[method-assign]
    changes: list[str] = []
    s.owner.add_listener(lambda st, what: changes.append(what))
    writes: list[int] = []
    save = s.owner.store.save
    s.owner.store.save = lambda *a: (writes.append(1), save(*a))[1]
    turns = [s.handle_message("make hello.py"), s.continue_task(observed=True)]
    for turn in turns:
        await turn
        assert _stored(db, sid) == s.state.to_dict()
    assert s.state.pending_gate and pending_at_reply[-1] is True
    await s.answer_approval(True)
    assert (e.root / "hello.py").exists() and _stored(db, sid) == s.state.to_dict()
    await s.continue_task(observed=True)
    assert s.state.step == Step.DONE
    assert _stored(db, sid) == s.state.to_dict()
    assert checked == ["PLANNING", "EXECUTION"]  # the list_files read, the approved write
    assert 0 < len(writes) < len(changes)


async def test_a_message_turn_is_stored_before_its_first_model_call(env: object) -> None:
    """A model call can take minutes on a local model; a process killed during one (a closed
    terminal, the OOM killer) must keep the task the person gave: by the first model call of the
    turn the store already holds it (with the rest of the state as it is in memory)."""
    from typing import Any

    from duckflow.llm.scripted import ScriptStep
    from duckflow.llm.types import ToolCall
    from tests.helpers.companion import decision

    e: Any = env
    o = e.open([
        decision("PLANNING", "base_main_specialized", rationale="plan first", plan_brief=["write hello.py"]),
        ScriptStep(text="Plan: hello\nSteps: 1. write hello.py", calls=[ToolCall("list_files", {"path": "."})]),
    ])
    s = o.session
    db = e.home / "sessions.db"
    sid = s.state.session_id
    stored_at_first_call: list[dict[str, object]] = []
    model = s.engine.main.model
    stream = model.stream

    def watched(*args: Any, **kwargs: Any) -> Any:
        if not stored_at_first_call:
            stored_at_first_call.append(_stored(db, sid))
            assert stored_at_first_call[0] == s.state.to_dict()
        return stream(*args, **kwargs)

    model.stream = watched
    await s.handle_message("make hello.py for me")
    assert stored_at_first_call and stored_at_first_call[0]["task"] == "make hello.py for me"
