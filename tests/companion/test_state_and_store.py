"""AgentState limits, persistence and restore."""

from __future__ import annotations

from pathlib import Path

from duckflow.companion.state import AgentState, Status, Step, Vitals
from duckflow.companion.store import SessionStore


def test_over_long_goal_is_shortened_visibly_with_a_note() -> None:
    s = AgentState("s1")
    s.set_goal("x" * 250)
    assert len(s.goal) == 200 and s.goal.endswith("…")
    assert any("goal shortened to 200" in n for n in s.notes)


def test_lists_keep_their_limits_and_name_what_was_dropped() -> None:
    s = AgentState("s1")
    s.set_constraints(["no network", "python 3.11", "keep tests green"])
    assert s.constraints == ["python 3.11", "keep tests green"]
    assert any("dropped: no network" in n for n in s.notes)
    s.set_plan_brief(["a", "b", "c", "d"])
    assert s.plan_brief == ["b", "c", "d"]
    s.set_open_questions(["q1?", "q2?", "q3?"])
    assert len(s.open_questions) == 2
    s.add_constraint("y" * 150)
    assert len(s.constraints[-1]) == 100 and s.constraints[-1].endswith("…")


def test_exchanges_keep_five_summaries_of_at_most_100_chars() -> None:
    s = AgentState("s1")
    for i in range(7):
        s.add_exchange(f"question {i} " + "z" * 200, f"answer {i}")
    assert s.conversation_count == 7
    assert len(s.summaries()) == 5
    assert all(len(x) <= 100 for x in s.summaries())
    assert s.summaries()[0].startswith("U: question 2")


def test_vitals_follow_symops_and_outcomes() -> None:
    v = Vitals()
    assert v.update_from_symops({"confidence": 0.3, "mood": None, "focus": 1.7}) == ["confidence", "focus"]
    assert v.confidence == 0.3 and v.focus == 1.0
    before = v.confidence
    v.record_outcome(False)
    assert v.confidence < before


def test_state_round_trips_through_the_store(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions.db")
    s = AgentState("abc", workspace=str(tmp_path), step=Step.AWAITING_APPROVAL, status=Status.REQUIRES_USER_INPUT)
    s.set_goal("write hello.py")
    s.pending_gate, s.pending_job = True, {"job_id": "j1", "call": {"name": "write_file"}}
    s.memory.note_file("hello.py")
    s.add_exchange("hi", "hello")
    store.save(s, {"transitions": []})
    store.close()
    again = SessionStore(tmp_path / "sessions.db")
    loaded = again.load("abc")
    assert loaded is not None
    restored, extra = loaded
    assert restored == s
    assert again.latest(str(tmp_path)) == "abc"
    assert again.list()[0].pending is True
    assert again.load("nope") is None


def test_vitals_are_read_from_a_symops_reply() -> None:
    from duckflow.companion.context import symops_vitals

    v = symops_vitals("~ plan it\n#c 0.35\n#m 0.6\n$ create @ a.py\n--\nx = 1\n--\n")
    assert v is not None and v["confidence"] == 0.35 and v["mood"] == 0.6
    assert symops_vitals("$ create @ a.py\n--\nx = 1\n--\n") is None
    s = AgentState("s")
    s.vitals.update_from_symops(v)
    assert s.vitals.confidence == 0.35 and s.vitals.focus == 0.8
