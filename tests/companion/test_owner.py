"""The single owner of the state: change callbacks, persistence after every change, crash safety."""

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
