"""Issue 33's failure shapes through the front door, `duckflow run`, with ScriptedModel: the ending's kind and what the person reads.

Each shape once with `--json` (the `result` a script reads: kind, check, expected, seen) and once
as a person sees it on the terminal (the ending line, and the next step it offers). The same
shapes at the session level are in tests/companion/test_expectation.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.companion.test_expectation import GUARDED, MEAN, NOTES
from tests.companion.test_honest_ending import create, edit, run, step

EXIT_OK, EXIT_STOPPED = 0, 1


def _plain(text: str) -> str:
    return " ".join(text.split())  # the terminal wraps at its width


@pytest.mark.parametrize("as_json", [True, False])
def test_a_check_that_prints_a_wrong_value_ends_not_done(front_door: Any, scripted: Any, as_json: bool) -> None:
    # the 1.5B model guarded the empty list and left `/ (len(xs) - 1)`; its own check printed 3.0
    (front_door.root / "stats.py").write_text(MEAN)
    scripted([step("guard the empty list", edit("stats.py", MEAN, GUARDED),
                   run('python3 -c "import stats; print(stats.mean([1,2,3]))"')),
              step("fine", done=True), step("fine", done=True)])
    rc, out, said = front_door.run("The mean function in stats.py gives wrong results: mean([1, 2, 3]) should be 2. "
                                   "Fix it.", as_json=as_json)
    assert rc != EXIT_OK
    if as_json:
        assert out["result"]["kind"] == "not_done" and not out["ok"]
        assert out["result"]["expected"] == "mean([1, 2, 3]) returns 2" and out["result"]["seen"] == "'3.0'"
    else:
        said = _plain(said)
        assert 'Not done — check failed: python3 -c "import stats; print(stats.mean([1, 2, 3]))" → 3.0; the task says 2' \
            in said
        assert "Say what to change" in said and "Done —" not in said


@pytest.mark.parametrize("as_json", [True, False])
def test_a_wrong_fix_against_the_assertion_written_first_ends_not_done(front_door: Any, scripted: Any,
                                                                        as_json: bool) -> None:
    # "Fix it." names no value: the assertion comes first, fails on the old code, and still fails
    (front_door.root / "stats.py").write_text(MEAN)
    check = 'python3 -c "import stats; got = stats.mean([1, 2, 3]); assert got == 2, got"'
    scripted([step("the check first", run(check), done=False),
              step("guard the empty list", edit("stats.py", MEAN, GUARDED),
                   run('python3 -c "import stats; print(stats.mean([1,2,3]))"')),
              step("guard it better", edit("stats.py", "    if not xs:\n        return 0\n",
                                           "    if len(xs) == 0:\n        return 0\n"))])
    rc, out, said = front_door.run("The mean function in stats.py gives wrong results. Fix it.", as_json=as_json)
    assert rc != EXIT_OK
    if as_json:
        assert out["result"]["kind"] == "not_done" and out["result"]["expected"] == "mean([1, 2, 3]) == 2"
        assert out["result"]["check"] == check
    else:
        said = _plain(said)
        assert "Not done — check failed: the task's check mean([1, 2, 3]) == 2 fails: it gave 3.0" in said
        assert "Done —" not in said


@pytest.mark.parametrize("as_json", [True, False])
def test_a_script_that_prints_nothing_ends_not_done(front_door: Any, scripted: Any, as_json: bool) -> None:
    (front_door.root / "notes.txt").write_text(NOTES)
    quiet = "def count_words(path):\n    with open(path) as f:\n        return len(f.read().split())\n"
    scripted([step("write it", create("wordcount.py", quiet), run("python3 wordcount.py"))] * 4)
    rc, out, said = front_door.run("Write a script that counts the words in notes.txt.", as_json=as_json)
    assert rc != EXIT_OK
    if as_json:
        assert out["result"]["kind"] == "not_done" and out["result"]["check"] == "python3 wordcount.py"
        assert out["result"]["expected"] == "it prints 20 (words in notes.txt)" and out["result"]["seen"] == ""
    else:
        said = _plain(said)
        assert "Not done — check failed: python3 wordcount.py → printed nothing; words in notes.txt are 20" in said
        assert "Done —" not in said


@pytest.mark.parametrize("as_json", [True, False])
def test_a_check_the_model_picked_that_the_task_contradicts_ends_not_done(front_door: Any, scripted: Any,
                                                                           as_json: bool) -> None:
    # `count_words('notes.txt')` counted the words of the string 'notes.txt' (1; the file has 20)
    (front_door.root / "notes.txt").write_text(NOTES)
    on_text = "def count_words(text):\n    return len(text.split())\n"
    call = "python3 -c \"import wordcount; print(wordcount.count_words('notes.txt'))\""
    scripted([step("write it", create("wordcount.py", on_text)), *[step("call it", run(call))] * 9])
    rc, out, said = front_door.run("Write wordcount.py that counts the words in notes.txt.", as_json=as_json)
    assert rc != EXIT_OK
    if as_json:
        assert out["result"]["kind"] == "not_done" and out["result"]["seen"] == "'1'"
        assert out["result"]["expected"] == "a call on the file's content"
    else:
        said = _plain(said)
        assert "count_words('notes.txt') was given the file's name, and count_words never opens a file" in said
        assert said.count("Not done —") >= 1 and "Done —" not in said.replace("Not done —", "")


@pytest.mark.parametrize("as_json", [True, False])
def test_the_wrong_value_fixed_ends_done_and_says_which_expectation(front_door: Any, scripted: Any,
                                                                     as_json: bool) -> None:
    (front_door.root / "stats.py").write_text(MEAN)
    scripted([step("fix it", edit("stats.py", "    return sum(xs) / (len(xs) - 1)\n", "    return sum(xs) / len(xs)\n"),
                   run('python3 -c "import stats; print(stats.mean([1,2,3]))"'))])
    rc, out, said = front_door.run("The mean function in stats.py gives wrong results: mean([1, 2, 3]) should be 2. "
                                   "Fix it.", as_json=as_json)
    assert rc == EXIT_OK
    if as_json:
        assert out["result"]["kind"] == "done" and out["result"]["expected"] == "mean([1, 2, 3]) returns 2"
    else:
        assert "Done — checked: " in _plain(said) and "as the task expects: mean([1, 2, 3]) returns 2" in _plain(said)


SUM_TASK = "Create total.py that prints 6, the sum of 1, 2 and 3."


@pytest.mark.parametrize(("body", "kind"), [("print(1 + 2 + 4)\n", "not_done"), ("print(1 + 2 + 3)\n", "done"),
                                            ("print(16)\n", "not_done")])
def test_a_new_script_the_task_says_prints_a_number_is_compared_with_it(front_door: Any, scripted: Any,
                                                                        body: str, kind: str) -> None:
    scripted([step("write it", create("total.py", body))] * 4)
    rc, out, _ = front_door.run(SUM_TASK)
    assert out["result"]["kind"] == kind and out["result"]["check"] == "python3 total.py", out
    if kind == "done":
        assert rc == EXIT_OK and out["result"]["expected"] == "python3 total.py prints 6"
    else:  # 16 shows a 6 in it: only the whole number counts
        assert rc != EXIT_OK and "the task says it prints 6" in out["result"]["said"]


def test_which_numbers_a_task_says_a_script_prints() -> None:
    from duckflow.companion.expect import said_number

    assert said_number(SUM_TASK, "total.py") == "6"
    assert said_number("Write avg.py so that it prints 2.5.", "avg.py") == "2.5"
    assert said_number("Write lines.py that prints 6 lines of stars", "lines.py") == ""  # 6 of something
    assert said_number("Write total.py that prints 6 when given 1 2 3", "total.py") == ""  # with arguments
    assert said_number("Write total.py that prints the sum", "total.py") == ""
    assert said_number("Fix countdown.py so that it prints 3, 2, 1 on separate lines", "countdown.py") == ""
    assert said_number("Fix countdown.py so that it prints 3 and 2", "countdown.py") == ""
    assert said_number("Fix calc.py so that it prints 0.5, then commit", "calc.py") == "0.5"
