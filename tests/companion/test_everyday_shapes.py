"""Shapes seen on the held-out everyday tasks (benchmarks/_everyday_tasks.py), driven end to end with ScriptedModel."""

from __future__ import annotations

from typing import Any

import pytest

from duckflow.companion.task import drive
from duckflow.companion.taskchecks import expected_value
from duckflow.llm.scripted import ScriptedModel
from tests.companion.test_honest_ending import asked, edit, ran, run, step
from tests.helpers.companion import env  # noqa: F401

MEAN = "def mean(xs):\n    return sum(xs) / (len(xs) - 1)\n"
GUARDED = "def mean(xs):\n    if not xs:\n        return 0\n    return sum(xs) / (len(xs) - 1)\n"
CALL = 'python3 -c "import stats; print(stats.mean([1, 2, 3]))"'


def _value(task: str) -> str:
    """The expectation read after the task's first call (`mean([1, 2, 3])`)."""
    return expected_value(task, task.index("])") + 2)


@pytest.mark.parametrize(("task", "value"), [
    ("mean([1, 2, 3]) returns 3.0 but should be 2. Fix it.", "2"),
    ("mean([1, 2, 3]) in stats.py should return 2, but it returns 3.0.", "2"),
    ("mean([1, 2, 3]) returns 3.0, which is wrong.", ""),
    ("mean([1, 2, 3]) gives 3.0 instead of 2.", ""),
    ("mean([1, 2, 3]) should be 2. Fix it.", "2"),
    ("mean([1, 2, 3]) returns 2.", "2"),
])
def test_the_value_a_task_wants_is_never_the_one_it_says_is_wrong(task: str, value: str) -> None:
    assert _value(task) == value


async def test_the_wrong_value_the_task_quotes_is_not_the_expectation(env: Any) -> None:  # noqa: F811
    # "returns 3.0 but should be 2": the value the code gives now is not what the result must show;
    # read the wrong way round, an edit that changed nothing that matters would have ended "Done"
    (env.root / "stats.py").write_text(MEAN)
    model = ScriptedModel([step("guard the empty list", edit("stats.py", MEAN, GUARDED), run(CALL)),
                           *[step("fine", done=True)] * 4], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(
        "In stats.py, mean([1, 2, 3]) returns 3.0 but should be 2. Fix it."), auto_approve_workspace=True)
    assert not out.success and out.result.kind == "not_done" and "Done" not in out.message
    assert CALL in [c.call.arguments["command"] for c in ran(out)]
    assert out.result.expected == "mean([1, 2, 3]) returns 2" and out.result.seen == "'3.0'"


async def test_the_value_after_a_file_name_is_the_expectation(env: Any) -> None:  # noqa: F811
    # "f(…) in m.py should return V": the value was not read past the file's name, and the run
    # could only end "not verified"
    (env.root / "stats.py").write_text(MEAN)
    fixed = "def mean(xs):\n    return sum(xs) / len(xs)\n"
    model = ScriptedModel([step("fix it", edit("stats.py", MEAN, fixed), run(CALL))], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(
        "mean([1, 2, 3]) in stats.py should return 2, but it returns 3.0. Fix it."), auto_approve_workspace=True)
    assert out.success and out.result.kind == "done", out.message
    assert "as the task expects: mean([1, 2, 3]) returns 2" in out.message


LOUD = "def hello(name):\n    return f'Hello, {name}!'\n\n\nprint('loaded')\nprint(hello('World'))\n"
GUARDED_DEMO = ("def hello(name):\n    return f'Hello, {name}!'\n\n\nif __name__ == '__main__':\n"
                "    print('loaded')\n    print(hello('World'))\n")
QUIET_TASK = "Importing greetings.py prints things. Make the demo at its bottom run only when greetings.py is run as a script."


async def test_a_module_that_still_prints_on_import_is_not_done(env: Any) -> None:  # noqa: F811
    # the hidden task "a function that must not print on import" had ended "Done": the call the
    # task names gave the right value, and nothing looked at what the import printed
    (env.root / "greetings.py").write_text(LOUD)
    renamed = LOUD.replace("print('loaded')", "print('ready')")
    model = ScriptedModel([step("quiet it", edit("greetings.py", LOUD, renamed)),
                           *[step("fine", done=True)] * 4], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(
        "Importing greetings.py prints output; it should not. hello('Ann') must still return 'Hello, Ann!'."),
        auto_approve_workspace=True)
    assert not out.success and out.result.kind == "not_done" and "Done" not in out.message
    assert "run on import: `print('ready')`" in str(model.requests[1].messages[-1].content)  # as it is now
    assert 'python3 -c "import greetings"' in [c.call.arguments["command"] for c in ran(out)]
    assert "importing greetings printed 'ready'; the task says importing it prints nothing" in out.message


async def test_the_demo_put_under_main_is_done_with_both_checks(env: Any) -> None:  # noqa: F811
    (env.root / "greetings.py").write_text(LOUD)
    model = ScriptedModel([step("guard it", edit("greetings.py", LOUD, GUARDED_DEMO))], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(QUIET_TASK), auto_approve_workspace=True)
    assert out.success and out.result.kind == "done", out.message
    assert len(model.requests) == 1  # the loop ran both checks itself
    # the first step named the lines that run on import (the 1.5B, told only the task, changed nothing)
    first = str(model.requests[0].messages[-1].content)
    assert ("These top-level lines of greetings.py run on import: `print('loaded')`, `print(hello('World'))`. "
            "Move them, indented, under `if __name__ == \"__main__\":`") in first
    assert {'python3 -c "import greetings"', "python3 greetings.py"} <= {c.call.arguments["command"] for c in ran(out)}
    assert "importing greetings prints nothing, and python3 greetings.py still prints" in out.message


async def test_the_demo_deleted_is_not_done(env: Any) -> None:  # noqa: F811
    (env.root / "greetings.py").write_text(LOUD)
    gone = "def hello(name):\n    return f'Hello, {name}!'\n"
    model = ScriptedModel([step("remove it", edit("greetings.py", LOUD, gone),
                                run("python3 -c \"import greetings; print(greetings.hello('Ann'))\"")),
                           *[step("fine", done=True)] * 4], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(QUIET_TASK), auto_approve_workspace=True)
    assert out.result.kind != "done" and "Done" not in out.message
    assert "python3 greetings.py printed nothing; the task says it still runs as a script" in out.message


def test_a_task_that_wants_output_on_import_is_not_read_as_quiet() -> None:
    from duckflow.companion.quietimport import quiet_import

    files = ["config.py", "app.py"]
    assert quiet_import("Make config.py print 'loaded' when it is imported.", files) is None
    assert quiet_import("Fix the import error in config.py: it doesn't run.", files) is None
    assert quiet_import("config.py prints a banner when imported; it shouldn't.", files) == ("config", False)
    assert quiet_import("Run the demo in config.py only when it is run directly.", files) == ("config", True)


LOG = "INFO start\nERROR disk\nINFO ok\nERROR net\nINFO done\n"


async def test_a_count_of_some_lines_is_not_compared_with_all_of_them(env: Any) -> None:  # noqa: F811
    # "counts the lines in app.log that contain ERROR" had the total (5) as its expectation: a
    # script printing the total ended "Done", one printing the right 2 "check failed"
    from tests.companion.test_honest_ending import create

    (env.root / "app.log").write_text(LOG)
    total = "print(len(open('app.log').read().splitlines()))\n"
    model = ScriptedModel([step("count", create("errors.py", total), run("python3 errors.py"))], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(
        "Write errors.py that counts the lines in app.log that contain ERROR."), auto_approve_workspace=True)
    assert out.result.kind != "done" and "Done" not in out.message, out.message
    assert out.result.kind == "not_verified" and "it printed '5'" in out.message


async def test_a_module_that_prints_on_import_is_told_which_lines_run_on_import(env: Any) -> None:  # noqa: F811
    # the 1.5B model removed one of the two prints and kept the other: the failed check now names
    # the module's top-level lines that run on import, the ones to move under __main__
    (env.root / "greetings.py").write_text(LOUD)
    half = LOUD.replace("print('loaded')\n", "")
    model = ScriptedModel([step("drop one print", edit("greetings.py", LOUD, half)),
                           step("guard it", edit("greetings.py", half, GUARDED_DEMO))], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(QUIET_TASK), auto_approve_workspace=True)
    fix = asked(model, 1)
    assert "importing greetings printed 'Hello, World!'" in fix
    assert "these top-level lines of greetings.py run on import: `print(hello('World'))`" in fix
    assert "under `if __name__ == \"__main__\":`" in fix
    assert out.success and out.result.kind == "done", out.message


def test_the_lines_that_run_on_import_leave_out_definitions_values_and_main() -> None:
    from duckflow.companion.quietimport import top_level_runs

    text = ("import os\nPORT = int(os.environ.get('PORT', 80))\n\n\ndef f():\n    print('x')\n\n\nprint('loaded')\n"
            "for i in range(2):\n    print(i)\nif __name__ == '__main__':\n    f()\n")
    assert top_level_runs(text) == ["print('loaded')", "for i in range(2):"]


CONFIG = "import os\n\nHOST = os.environ.get('HOST', 'localhost')\nPORT = int(os.environ['PORT'])\n"
CONFIG_TASK = "config.py crashes when the PORT environment variable is not set. Make it use 8080 then."


async def test_a_module_of_values_is_checked_by_running_it(env: Any) -> None:  # noqa: F811
    # a module with no function to call ended "Not done — not checked: nothing ran the changed code"
    (env.root / "config.py").write_text(CONFIG)
    fixed = CONFIG.replace("int(os.environ['PORT'])", "int(os.environ.get('PORT', 8080))")
    model = ScriptedModel([step("default it", edit("config.py", CONFIG, fixed))], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(CONFIG_TASK), auto_approve_workspace=True)
    assert [c.call.arguments["command"] for c in ran(out)] == ["python3 config.py"]  # the loop ran it itself
    assert out.success and out.result.kind == "not_verified", out.message
    assert "ran python3 config.py, it printed nothing" in out.message and "Done" not in out.message


async def test_a_module_of_values_that_still_crashes_is_not_done(env: Any) -> None:  # noqa: F811
    (env.root / "config.py").write_text(CONFIG)
    moved = CONFIG.replace("HOST = os.environ.get('HOST', 'localhost')", "HOST = 'localhost'")
    model = ScriptedModel([step("change it", edit("config.py", CONFIG, moved)), *[step("fine", done=True)] * 4],
                          name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(CONFIG_TASK), auto_approve_workspace=True)
    assert not out.success and out.result.kind == "not_done" and "Done" not in out.message
    assert "check failed: python3 config.py → exit 1: KeyError: 'PORT'" in out.message


async def test_the_checks_the_loop_runs_itself_do_not_use_up_the_turns(env: Any) -> None:  # noqa: F811
    # the 1.5B model's right edit came at turn 11; the loop's own two checks of it (no model call)
    # ran into the 12-turn limit, and a result that met the task ended "stopped after 12 turns"
    (env.root / "greetings.py").write_text(LOUD)
    model = ScriptedModel([step("guard it", edit("greetings.py", LOUD, GUARDED_DEMO))], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(QUIET_TASK), max_turns=2, auto_approve_workspace=True)
    assert out.ending == "done" and out.result.kind == "done", out.message
    assert len(model.requests) == 1 and len(ran(out)) == 2
