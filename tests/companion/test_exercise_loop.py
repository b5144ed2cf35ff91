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
    assert "'odd' != 'even'" in fix and "timed out" not in fix
    assert "self.assertEqual(label(" in fix
    assert out.ending == "done" and (env.root / "parity.py").read_text() == RIGHT
    assert "Done" in out.message and "parity_test.py" in out.message
