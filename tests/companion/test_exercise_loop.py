"""An exercise-shaped task (a stub and the unittest file that judges it), driven end to end with
ScriptedModel in the single-call loop: what the fix rounds see, how many there are, how long
their replies may be, and that "Done" needs the tests to pass."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from duckflow.companion.task import drive
from duckflow.llm.scripted import ScriptedModel, reply
from tests.helpers.companion import env  # noqa: F401

HEAD = "#c0.9 #m0.8 #f0.9 #s0.9\n"
STUB = "def label(n):\n    pass\n"
RIGHT = "def label(n):\n    return 'even' if n % 2 == 0 else 'odd'\n"
WRONG = "def label(n):\n    return 'odd'\n"
TASK = ("# Instructions\n\nLabel a number: 'even' or 'odd'.\n\n####\n\nUse the above instructions to modify "
        "the supplied files: parity.py\nDon't change the names of existing functions or classes, as they "
        "may be referenced from other code like unit tests, etc.\n")


def unit_tests(n: int = 3) -> str:
    """A unittest file: `n` tests, each failing loudly (a long message) on wrong code."""
    body = "".join(f"    def test_even_{i}(self):\n        self.assertEqual(label({2 * i}), 'even', 'x' * 400)\n\n"
                   for i in range(n))
    return f"import unittest\n\nfrom parity import (\n    label,\n)\n\n\nclass ParityTest(unittest.TestCase):\n{body}"


def step(thought: str, *actions: str, done: bool = True) -> Any:
    return reply(f"~ {thought}\n{HEAD}" + "".join(actions) + f"~ next: {'DONE' if done else 'CONTINUE'}\n")


def create(path: str, text: str) -> str:
    return f"$ create @ {path}\n---\n{text}---\n"


def asked(model: Any, i: int) -> str:
    return str(model.requests[i].messages[-1].content)


def workspace(root: Path, n: int = 3) -> None:
    (root / "parity.py").write_text(STUB)
    (root / "parity_test.py").write_text(unit_tests(n))


async def test_a_long_failing_test_run_shows_the_fix_its_first_failed_assert(env: Any) -> None:  # noqa: F811
    workspace(env.root, n=12)  # the run's output is far longer than a tool result is kept
    model = ScriptedModel([step("write it", create("parity.py", WRONG)),
                           step("fix it", create("parity.py", RIGHT))], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(TASK), auto_approve_workspace=True)
    fix = asked(model, 1)
    # the failed assert, as the test says it (not "timed out" read from a result cut as text)
    assert "label(0) returned 'odd', but the test expects 'even'" in fix and "timed out" not in fix
    assert out.ending == "done" and (env.root / "parity.py").read_text() == RIGHT
    assert "Done" in out.message and "parity_test.py" in out.message
    # a plain unittest file runs with the standard library's runner (no plugins to load)
    assert "python3 -m unittest -q parity_test.py → 12 passed" in out.message


async def test_the_first_reply_sees_the_asserts_of_the_tests_beside_the_stub(env: Any) -> None:  # noqa: F811
    workspace(env.root, n=2)
    (env.root / "parity_test.py").write_text(unit_tests(2) + (
        "    def test_negative(self):\n        with self.assertRaises(ValueError) as err:\n            label(\n"
        "                -1\n            )\n        self.assertEqual(type(err.exception), ValueError)\n"
        "        self.assertEqual(err.exception.args[0], 'n must be positive')\n"))
    model = ScriptedModel([step("write it", create("parity.py", RIGHT))], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    await drive(o.session, o.session.handle_message(TASK), auto_approve_workspace=True)
    first = asked(model, 0)
    shown = first[first.index("The tests in parity_test.py"):first.index("File parity.py:")]
    assert "self.assertEqual(label(0), 'even', 'x' * 400)" in shown and "label(2)" in shown
    # a statement over several lines is one line; the with-block keeps its shape; the type check is dropped
    assert "with self.assertRaises(ValueError) as err:\n    label(-1)\n" in shown
    assert "'n must be positive'" in shown and "type(err.exception)" not in shown
    assert "def test_" not in shown and "import unittest" not in shown


def test_a_long_test_file_is_shown_within_its_budget_each_shape_first() -> None:
    from duckflow.companion.testview import digest

    text = unit_tests(40) + "    def test_odd(self):\n        self.assertEqual(label(1), 'odd')\n"
    shown = digest(text, limit=300)
    assert len(shown) <= 300 + 40 and "more tests not shown" in shown
    assert "label(1), 'odd'" in shown  # the one assert of another shape, though it is last
    assert shown.index("label(0)") < shown.index("label(1), 'odd'")  # in the file's order


async def test_a_fix_round_sees_every_kind_of_failure_of_the_test_run_at_once(env: Any) -> None:  # noqa: F811
    workspace(env.root, n=2)
    (env.root / "parity_test.py").write_text(unit_tests(2).replace(", 'x' * 400", "") + (
        "    def test_odd(self):\n        self.assertIs(label(1), 'odd')\n\n"
        "    def test_none(self):\n        self.assertEqual(label(None), 'neither')\n"))
    model = ScriptedModel([step("write it", create("parity.py", WRONG)),
                           step("fix it", create("parity.py", RIGHT))], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    await drive(o.session, o.session.handle_message(TASK), auto_approve_workspace=True)
    fix = asked(model, 1)
    said = fix[fix.index("The check failed"):]
    # each failure said as what the call returned against what the test expects
    assert "label(0) returned 'odd', but the test expects 'even'" in said
    assert "label(None) returned 'odd', but the test expects 'neither'" in said
    assert said.count("\n- ") >= 2 and "chance 1 of 2" in said


async def test_a_unittest_run_that_ran_no_test_proves_nothing(env: Any) -> None:  # noqa: F811
    (env.root / "parity.py").write_text(STUB)
    (env.root / "parity_test.py").write_text("import unittest\n\nfrom parity import label\n\n\n"
                                             "class ParityTest(unittest.TestCase):\n    pass\n")
    call = "$ run @ python3 -c \"import parity; print(parity.label(2))\"\n"
    model = ScriptedModel([step("write it", create("parity.py", RIGHT)), step("call it", call)], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(TASK), auto_approve_workspace=True)
    assert not out.message.startswith("Done")  # the empty test run proved nothing; the call compared nothing
    assert "Now check parity.py: call label" in asked(model, 1)  # a call is asked for: no test ran


class LocalScripted(ScriptedModel):
    provider = "llamacpp"  # like llama.cpp's server on this machine: replies bounded and constrained
    is_local = True


async def test_a_fix_round_reply_is_bounded_by_the_file_it_fixes_not_the_first_replys_700(env: Any) -> None:  # noqa: F811
    workspace(env.root, n=2)
    model = LocalScripted([step("write it", create("parity.py", WRONG)),
                           step("fix it", create("parity.py", RIGHT))], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(TASK), auto_approve_workspace=True)
    bounds = [r.settings.max_tokens for r in model.requests if r.settings is not None]
    assert bounds[0] == 700 and len(bounds) == 2
    assert 300 <= bounds[1] < 700  # a fix of a 2-line file: the floor, far below the first reply's bound
    assert out.ending == "done"


def edit(path: str, search: str, replace: str) -> str:
    return f"$ edit @ {path}\n---\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n---\n"


async def test_a_fix_round_of_a_small_file_writes_it_whole_a_longer_one_may_be_edited(env: Any) -> None:  # noqa: F811
    workspace(env.root, n=2)
    model = LocalScripted([step("write it", create("parity.py", WRONG)),
                           step("fix it", create("parity.py", RIGHT))], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(TASK), auto_approve_workspace=True)
    first, fix = model.requests[0].settings, model.requests[1].settings
    assert first is not None and fix is not None
    assert "$ edit @ " in first.extra["grammar"] and "$ edit @ " not in fix.extra["grammar"]
    assert "Write parity.py again, whole and fixed: $ create @ parity.py." in asked(model, 1)
    assert out.ending == "done"
    # a file longer than a screen keeps the edit in its fix round (a rewrite would drop lines)
    long_wrong = WRONG + "".join(f"\n\ndef helper_{i}(x):\n    return x + {i}\n" for i in range(12))
    (env.root / "parity.py").write_text(STUB)
    model = LocalScripted([step("write it", create("parity.py", long_wrong)),
                           step("fix it", edit("parity.py", "    return 'odd'\n",
                                               "    return 'even' if n % 2 == 0 else 'odd'\n"))], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(TASK), auto_approve_workspace=True)
    fix = model.requests[1].settings
    assert fix is not None and "$ edit @ " in fix.extra["grammar"] and "whole and fixed" not in asked(model, 1)
    assert out.ending == "done"


async def test_a_fix_that_writes_the_file_as_it_is_is_told_so_in_the_next_round(env: Any) -> None:  # noqa: F811
    workspace(env.root, n=2)
    model = LocalScripted([step("write it", create("parity.py", WRONG)),
                           step("write it", create("parity.py", WRONG)),  # the failing file, copied
                           step("fix it", create("parity.py", RIGHT))], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(TASK), auto_approve_workspace=True)
    # at temperature 0 the same prompt would give the same copy: the next round says what it did
    assert "wrote parity.py exactly as it already was" not in asked(model, 1)
    assert "Your last reply wrote parity.py exactly as it already was: nothing changed" in asked(model, 2)
    assert "chance 2 of 2" in asked(model, 2) and len(model.requests) == 3  # no extra call for it
    # and that round samples (the words alone gave the same copy again with the 1.5B: bench series)
    from duckflow.companion.replycheck import RESAMPLE_TEMPERATURE
    from duckflow.llm.constrain import LOCAL_TEMPERATURE
    assert model.requests[1].settings.temperature == LOCAL_TEMPERATURE < RESAMPLE_TEMPERATURE
    assert model.requests[2].settings.temperature == RESAMPLE_TEMPERATURE
    assert out.ending == "done" and (env.root / "parity.py").read_text() == RIGHT


async def test_the_tests_beside_the_stub_are_the_check_not_a_call_the_prose_names(env: Any) -> None:  # noqa: F811
    # the instructions name `label()` with empty parentheses ("if the `label()` function is passed …"):
    # that names the function, it is not a call with a value. The tests judge the result, and they run.
    workspace(env.root, n=2)
    task = TASK.replace("Label a number", "Raise a ValueError if the `label()` function is passed a negative "
                        "number. Label a number")
    model = ScriptedModel([step("write it", create("parity.py", WRONG)),
                           step("fix it", create("parity.py", RIGHT))], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(task), auto_approve_workspace=True)
    fix = asked(model, 1)
    assert "label(0) returned 'odd', but the test expects 'even'" in fix  # the tests ran first, and failed
    assert "label()" not in fix.split("Results so far:")[-1]  # no call without its argument was run
    assert out.ending == "done" and "python3 -m unittest -q parity_test.py → 2 passed" in out.message
    assert len(model.requests) == 2  # no call asked for once the tests passed


async def test_a_call_the_task_names_with_its_value_is_compared_after_the_tests_pass(env: Any) -> None:  # noqa: F811
    # both expectations stand: the tests pass, but the task's own `label(3) should return 'odd'` is
    # run too, and a result that contradicts it is not Done
    workspace(env.root, n=2)
    even_only = "def label(n):\n    return 'even'\n"
    task = TASK.replace("Label a number: 'even' or 'odd'.", "Label a number: label(3) should return 'odd'.")
    model = ScriptedModel([step("write it", create("parity.py", even_only)),
                           step("fix it", create("parity.py", RIGHT))], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(task), auto_approve_workspace=True)
    assert "the task says 'odd'" in asked(model, 1)  # tests passed, the task's call did not: fix round
    assert out.ending == "done" and (env.root / "parity.py").read_text() == RIGHT
    assert "the tests in parity_test.py pass; label(3) returns 'odd'" in out.message  # both, said


RAISING_TEST = ("import unittest\n\nfrom parity import label\n\n\nclass ParityTest(unittest.TestCase):\n"
                "    def test_even(self):\n        self.assertEqual(label(2), 'even')\n\n"
                "    def test_negative(self):\n        with self.assertRaises(ValueError) as err:\n"
                "            label(-1)\n        self.assertEqual(type(err.exception), ValueError)\n"
                "        self.assertEqual(err.exception.args[0], 'n must be positive')\n\n"
                "    def test_none(self):\n        with self.assertRaises(ValueError) as err:\n"
                "            label(None)\n        self.assertEqual(err.exception.args[0], 'n is missing')\n")


async def test_a_fix_round_sees_the_call_of_a_failed_raising_test_and_the_error_it_expects(env: Any) -> None:  # noqa: F811
    # unittest's output names neither the call nor the wanted error of an assertRaises test
    # ("AssertionError: 'bad' != 'n must be positive'"): the fix round is told both
    (env.root / "parity.py").write_text(STUB)
    (env.root / "parity_test.py").write_text(RAISING_TEST)
    wrong = ("def label(n):\n    if n is not None and n < 0:\n        raise ValueError('bad')\n"
             "    return 'even' if n % 2 == 0 else 'odd'\n")
    model = ScriptedModel([step("write it", create("parity.py", wrong)),
                           step("fix it", create("parity.py", RIGHT))], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    await drive(o.session, o.session.handle_message(TASK), auto_approve_workspace=True)
    fix = asked(model, 1)
    assert ("label(-1) raised ValueError('bad'), but the test expects ValueError('n must be positive')" in fix)
    # a test whose call raised something else, and one that raised nothing
    assert "label(None) raised TypeError: " in fix and "but the test expects ValueError('n is missing')" in fix
    from duckflow.companion.testview import raised_words
    assert raised_words(RAISING_TEST, "test_negative", "AssertionError: ValueError not raised") == \
        "label(-1) raised no error, but the test expects ValueError('n must be positive')"
    assert raised_words(RAISING_TEST, "test_even", "AssertionError: 'odd' != 'even'") == ""  # not its shape


async def test_a_failed_assert_over_several_lines_is_said_with_its_call(env: Any) -> None:  # noqa: F811
    # unittest names a statement over several lines by its first, `self.assertEqual(`: the fix
    # round is told the call (its input), what it returned and what the test expects
    (env.root / "parity.py").write_text(STUB)
    (env.root / "parity_test.py").write_text(
        "import unittest\n\nfrom parity import label\n\n\nclass ParityTest(unittest.TestCase):\n"
        "    def test_words(self):\n        self.assertEqual(\n            label(4),\n"
        "            'even',\n        )\n")
    model = ScriptedModel([step("write it", create("parity.py", WRONG)),
                           step("fix it", create("parity.py", RIGHT))], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(TASK), auto_approve_workspace=True)
    assert "test_words: label(4) returned 'odd', but the test expects 'even'" in asked(model, 1)
    assert out.ending == "done"


def test_a_test_file_built_to_break_the_parser_says_no_more_than_the_run() -> None:
    # a cloned repository's test file is the workspace's, not ours: one nested past the parser's
    # limits (MemoryError from CPython's parser) leaves the failure as the run said it, no crash
    from duckflow.companion.taskchecks import _required
    from duckflow.companion.testview import failed_words

    deep = "class T:\n    def t(self):\n        self.assertEqual(f(" + "-" * 300000 + "1), 2)\n"
    raising = ("def t(self):\n    with self.assertRaises(ValueError) as err:\n        f(" + "not " * 200000 + "1)\n")
    assert failed_words(deep, "t", "AssertionError: 1 != 2", 3) == ""
    assert failed_words(raising, "t", "AssertionError: ValueError not raised") == ""
    assert failed_words("a\x00b", "t", "AssertionError: 1 != 2", 1) == ""
    assert _required("x" + ", y=" + "-" * 300000 + "1") is False
