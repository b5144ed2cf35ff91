"""Test first beyond an existing module in single-call mode (issue 33): in the two-call turn, and for a new function the task says returns something.

Where the task names no value, the model writes the assertion the result must pass before the
change; the loop runs it after the change, and only it passing makes the ending "Done".
"""

from __future__ import annotations

from typing import Any

from duckflow.companion.task import drive
from duckflow.llm.scripted import ScriptedModel, tool_call
from tests.companion.test_expectation import ASSERT, GUARDED, MEAN
from tests.companion.test_honest_ending import create, ran, run, step
from tests.helpers.companion import decision, env  # noqa: F401

FIX_IT = "The mean function in stats.py gives wrong results. Fix it."
FIXED = MEAN.replace("(len(xs) - 1)", "len(xs)")


def _two_call(wrote: str) -> list[Any]:
    return [decision("EXECUTION", "base_main_specialized", rationale="the check first"),
            tool_call("execute_shell", command=ASSERT),
            decision("EXECUTION", "base_main_specialized", rationale="fix the division"),
            tool_call("write_file", path="stats.py", content=wrote),
            decision("DONE", next_step="done", rationale="done"),
            decision("DONE", next_step="done", rationale="done, I say")]


async def test_two_call_asks_for_the_assertion_first_and_a_wrong_fix_is_not_done(env: Any) -> None:  # noqa: F811
    (env.root / "stats.py").write_text(MEAN)
    o = env.open(_two_call(GUARDED), mode="two-call")
    out = await drive(o.session, o.session.handle_message(FIX_IT), auto_approve_workspace=True)
    model = o.session.model
    assert isinstance(model, ScriptedModel)
    first = str(model.requests[1].messages[-1].content)  # the Specialized prompt of the first step
    assert "Before changing anything, write the check the result must pass: call mean" in first
    assert [c.call.arguments["command"] for c in ran(out)] == [ASSERT, ASSERT]  # the old code, then before the end
    assert out.result.kind == "not_done" and "Done —" not in out.message, out.message
    assert "the task's check mean([1, 2, 3]) == 2 fails: it gave 3.0" in out.result.said


async def test_two_call_the_right_fix_is_done_against_the_assertion(env: Any) -> None:  # noqa: F811
    (env.root / "stats.py").write_text(MEAN)
    o = env.open(_two_call(FIXED), mode="two-call")
    out = await drive(o.session, o.session.handle_message(FIX_IT), auto_approve_workspace=True)
    assert out.success and out.result.kind == "done", out.message
    assert out.message.endswith("as the task expects: mean([1, 2, 3]) == 2")


NEW_TASK = "Create calc.py with a function add(a, b) that returns the sum of a and b."
ADD_CHECK = 'python3 -c "import calc; got = calc.add(2, 3); assert got == 5, got"'


def test_a_new_function_s_assertion_is_kept_first_and_a_wrong_one_is_not_done(front_door: Any, scripted: Any) -> None:
    model = scripted([step("the check first", run(ADD_CHECK), done=False),
                      step("write it", create("calc.py", "def add(a, b):\n    return a - b\n")),
                      *[step("write it again", create("calc.py", "def add(a, b):\n    return a - b  # sum\n"))] * 4])
    rc, out, said = front_door.run(NEW_TASK, as_json=False)
    said = " ".join(said.split())
    assert "Before writing anything, write the check the result must pass: call add" in str(
        model.requests[0].messages[-1].content)
    assert "The check the result must pass: add(2, 3) == 5 (kept; it runs once calc.py is written)." in said
    assert "The result must pass the check written first: add(2, 3) == 5" in str(model.requests[1].messages[-1].content)
    assert rc != 0 and "Not done — check failed: the task's check add(2, 3) == 5 fails: it gave -1" in said
    assert "Done —" not in said.replace("Not done —", "")


def test_a_new_function_that_meets_its_assertion_is_done(front_door: Any, scripted: Any) -> None:
    scripted([step("the check first", run(ADD_CHECK), done=False),
              step("write it", create("calc.py", "def add(a, b):\n    return a + b\n"))])
    rc, out, _ = front_door.run(NEW_TASK)
    assert rc == 0 and out["result"]["kind"] == "done" and out["result"]["expected"] == "add(2, 3) == 5"
    assert out["result"]["check"] == ADD_CHECK


def test_which_tasks_get_a_test_first_step() -> None:
    from duckflow.companion.testfirst import function_named

    assert function_named(NEW_TASK) == "add"
    assert function_named("Write stats.py with a function called median that returns the middle value") == "median"
    assert function_named("Add the slugify function to text.py; it returns a slug") == "slugify"
    assert function_named("Write a script that prints the sum of the numbers in data.txt") == ""
    assert function_named("Create hello.py that prints how long the name is, as len(name) does") == ""  # a builtin


async def test_two_call_keeps_a_new_function_s_assertion_and_runs_it_before_the_end(env: Any) -> None:  # noqa: F811
    o = env.open([decision("EXECUTION", "base_main_specialized", rationale="the check first"),
                  tool_call("execute_shell", command=ADD_CHECK),
                  decision("EXECUTION", "base_main_specialized", rationale="write it"),
                  tool_call("write_file", path="calc.py", content="def add(a, b):\n    return a - b\n"),
                  decision("DONE", next_step="done", rationale="done"),
                  decision("DONE", next_step="done", rationale="done, I say")], mode="two-call")
    said: list[str] = []
    o.session.chunks.subscribe(lambda c: said.append(c.data.message) if c.type == "notice" else None)
    out = await drive(o.session, o.session.handle_message(NEW_TASK), auto_approve_workspace=True)
    model = o.session.model
    assert isinstance(model, ScriptedModel)
    assert "Before writing anything, write the check the result must pass: call add" in str(
        model.requests[1].messages[-1].content)
    assert "The check the result must pass: add(2, 3) == 5 (kept; it runs once calc.py is written)." in said
    held, *runs = ran(out)
    assert held.kept_note and '"exit_code"' not in held.content  # kept, not run on no code
    assert [c.call.arguments["command"] for c in runs] == [ADD_CHECK]  # run once, before the end
    assert out.result.kind == "not_done" and "add(2, 3) == 5 fails: it gave -1" in out.result.said, out.message


def test_a_new_function_gets_the_step_unless_the_task_writes_a_call_and_its_value(env: Any) -> None:  # noqa: F811
    from duckflow.companion.checks import CheckLog
    from duckflow.companion.testfirst import target

    o = env.open([], mode="single-call", codec="symops")

    def first(task: str) -> Any:
        log = CheckLog()
        log.task = task
        return target(o.session, log)

    assert first(NEW_TASK) == ("calc", "add", True)
    assert first("Write fizz.py with a function fizzbuzz(n) that returns 'Fizz' for multiples of 3") == (
        "fizz", "fizzbuzz", True)  # a word with a parameter in it is no value to compare
    assert first("Create calc.py with add(a, b); add(2, 3) should return 5.") is None  # the task's own value
    assert first("Create hello.py that prints a greeting") is None  # no function named
    assert first("Create greet.py with greet(name) that returns 'Hello, NAME!'") is None  # a value with a placeholder
