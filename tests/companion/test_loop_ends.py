"""The loop never drops a question or strands a task: a read-only task ends DONE in one message in
both modes, a reply cut off at its length limit is asked again in every layer, a valid reply after
one is never refused by the transition limit, and a Sym-Ops question waits for the person's answer."""

from __future__ import annotations

from typing import Any

from duckflow.companion.state import Status, Step
from duckflow.companion.task import drive
from duckflow.llm.scripted import ScriptedModel, ScriptStep, reply, tool_call
from tests.helpers.companion import decision, env, steps_of  # noqa: F401

CALC = "def add(a, b):\n    return a + b\n"
VITALS = "#c0.9 #m0.9 #f0.9 #s0.9\n"


def notices(o: Any, code: str) -> list[Any]:
    return [c.data for r in getattr(o, "results", []) for c in r.chunks
            if c.type == "notice" and c.data.code == code]


def requests(o: Any) -> list[Any]:
    model = o.session.model
    assert isinstance(model, ScriptedModel)
    return model.requests


async def test_two_call_read_only_task_ends_done_in_one_message(env: Any, steps_of: Any) -> None:  # noqa: F811
    (env.root / "calc.py").write_text(CALC)
    o = env.open([
        decision("EXECUTION", "base_main_specialized", rationale="read calc.py"),
        tool_call("read_file", path="calc.py"),
        decision("REVIEW", rationale="it adds two numbers", say="calc.py adds two numbers"),
        decision("DONE", next_step="done", rationale="answered", say="calc.py defines add(a, b)."),
    ])
    out = await drive(o.session, o.session.handle_message("what does calc.py do?"))
    assert out.ending == "done", out.message
    assert steps_of(o) == ["PLANNING>EXECUTION", "EXECUTION>REVIEW", "REVIEW>DONE"]
    assert not [r for r in o.session.owner.controller.refused() if "limit" in r.reason]


async def test_single_call_read_only_task_is_answered_and_done(env: Any) -> None:  # noqa: F811
    (env.root / "calc.py").write_text(CALC)
    o = env.open([reply("~ calc.py defines add(a, b), which returns the sum of a and b\n" + VITALS
                        + "~ next: DONE\n")], codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message("What does calc.py do?"))
    assert out.ending == "done", out.message
    assert "returns the sum" in out.message
    assert o.session.state.step == Step.DONE and len(requests(o)) == 1
    assert (env.root / "calc.py").read_text() == CALC  # nothing was written


async def test_single_call_cut_off_reply_is_asked_again(env: Any) -> None:  # noqa: F811
    # it reads as a whole reply, but the model never ended it: the print and the run are missing
    cut = "~ write add.py\n" + VITALS + "$ create @ add.py\n---\ndef add(a, b):\n    return a + b\n---\n"
    good = ("~ write add.py\n" + VITALS + "$ create @ add.py\n---\ndef add(a, b):\n    return a + b\n\n"
            "print(add(2, 3))\n---\n$ run @ python3 add.py\n~ next: DONE\n")
    o = env.open([ScriptStep(text=cut, finish_reason="length"), reply(good)], codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message("Create add.py that prints 2+3 using add(), run it"),
                      auto_approve_workspace=True)
    assert out.success, out.message
    assert (env.root / "add.py").read_text().endswith("print(add(2, 3))\n")
    again = requests(o)[1].messages[-1].content
    assert "cut off" in again
    assert not [r for r in o.session.owner.controller.refused() if "limit" in r.reason]


async def test_single_call_valid_reply_is_not_refused_by_the_transition_limit(env: Any) -> None:  # noqa: F811
    good = ("~ write add.py\n" + VITALS + "$ create @ add.py\n---\ndef add(a, b):\n    return a + b\n\n"
            "print(add(2, 3))\n---\n$ run @ python3 add.py\n~ next: DONE\n")
    o = env.open([reply(good)], codec="symops", mode="single-call")
    s = o.session
    s.owner.change("task", lambda st: setattr(st, "task", "Create add.py that prints 2+3 using add(), run it"))
    s._transition(Step.EXECUTION, "an earlier step", "decision")
    s._transition(Step.REVIEW, "an earlier reply ran no action", "outcome")
    assert not s.owner.controller.limiter.can_transition()  # this message's one move is used up
    out = await drive(s, s.continue_task(observed=False), auto_approve_workspace=True)
    assert out.success, out.message
    assert "Could not start executing" not in " ".join(r.reply for r in out.results)


async def test_two_call_cut_off_decision_is_asked_again_not_repaired(env: Any, steps_of: Any) -> None:  # noqa: F811
    (env.root / "calc.py").write_text(CALC)
    first = decision("DONE", next_step="done", rationale="done")  # readable, but cut off: never used
    o = env.open([
        ScriptStep(text=first.text, finish_reason="length"),
        decision("EXECUTION", "base_main_specialized", rationale="read calc.py"),
        tool_call("read_file", path="calc.py"),
        decision("DONE", next_step="done", rationale="answered", say="It adds."),
    ])
    out = await drive(o.session, o.session.handle_message("what does calc.py do?"))
    assert out.ending == "done", out.message
    assert "cut off" in requests(o)[1].messages[-1].content
    assert steps_of(o)[0] == "PLANNING>EXECUTION"


async def test_two_call_cut_off_specialized_reply_is_asked_again(env: Any) -> None:  # noqa: F811
    o = env.open([
        decision("EXECUTION", "base_main_specialized", rationale="write notes.txt"),
        ScriptStep(text="~ write it\n$ create @ notes.txt\n---\nfirst line\n---\n", finish_reason="length"),
        reply("~ write it\n$ create @ notes.txt\n---\nfirst line\nsecond line\n---\n"),
    ], codec="symops")
    r = await o.session.handle_message("write notes.txt with two lines")
    assert r.pending is not None
    assert "second line" in r.pending["request"]["diff_preview"]
    assert "cut off" in requests(o)[2].messages[-1].content


async def test_a_symops_question_waits_for_the_answer_and_reaches_the_model(env: Any) -> None:  # noqa: F811
    ask = ('~ the task does not say the name\n' + VITALS
           + '? "Which name should the script have?"\n  1. greet.py\n  2. hello.py\n')
    write = ('~ write hello.py as answered\n' + VITALS + '$ create @ hello.py\n---\nprint("hi")\n---\n'
             '$ run @ python3 hello.py\n~ next: DONE\n')
    o = env.open([reply(ask), reply(write)], codec="symops", mode="single-call")
    s = o.session
    out = await drive(s, s.handle_message("Create a script that prints hi and run it"))
    assert out.ending == "input"
    asked = [c.data for c in out.results[-1].chunks if c.type == "notice" and c.data.code == "question"]
    assert asked and asked[0].details["options"] == ["greet.py", "hello.py"]
    assert "1. greet.py" in asked[0].message and "2. hello.py" in asked[0].message
    assert s.state.status == Status.REQUIRES_USER_INPUT and not list(env.root.iterdir())
    out = await drive(s, s.handle_message("2"), auto_approve_workspace=True)
    assert out.success, out.message
    assert (env.root / "hello.py").exists() and not (env.root / "greet.py").exists()
    assert "hello.py" in requests(o)[1].messages[-1].content
    assert not s.state.open_questions
