"""The five fixed fields (goal, why_now, constraints, plan_brief, open_questions) are checked for consistency
at each transition: repaired where certain (and logged), else one warning line."""

from __future__ import annotations

from typing import Any

from duckflow.companion.state import Step
from duckflow.llm.scripted import tool_call
from tests.helpers.companion import decision, env  # noqa: F401


def checks_said(result: Any) -> list[str]:
    return [c.data.message for c in result.chunks if c.type == "notice" and c.data.code == "state_check"]


async def test_an_empty_goal_becomes_the_tasks_words_when_work_starts(env: Any) -> None:  # noqa: F811
    o = env.open([decision("EXECUTION", "base_main_specialized", rationale="list first"),
                  tool_call("list_files", path=".")])
    s = o.session
    await s.handle_message("tidy the notes folder")
    assert s.state.goal == "tidy the notes folder" and s.state.why_now == "the person asked for it"
    assert any(line.startswith("state check: goal was empty") for line in s.state.decision_log)


async def test_a_repeated_constraint_is_kept_once_and_open_questions_close_at_done(env: Any) -> None:  # noqa: F811
    o = env.open([decision("EXECUTION", "base_main_specialized", rationale="read", goal="answer"),
                  tool_call("list_files", path="."),
                  decision("DONE", next_step="done", rationale="answered")])
    s = o.session
    s.owner.change("two of one", lambda st: setattr(st, "constraints", ["no network", "no network"]))
    s.owner.change("a question", lambda st: setattr(st, "open_questions", ["which folder?"]))
    r1 = await s.handle_message("what is in this folder?")
    assert s.state.constraints == ["no network"]
    assert checks_said(r1) == ["executing with an open question: which folder?"]
    r2 = await s.continue_task(observed=True)
    assert s.state.step == Step.DONE and s.state.open_questions == []
    assert checks_said(r2) == ["done with an open question left: which folder? (closed)"]
