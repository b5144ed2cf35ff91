"""A task ends "Done" only when its own expectation was met: each failure shape of issue 33, with ScriptedModel."""

from __future__ import annotations

from typing import Any

from duckflow.companion.task import drive
from duckflow.llm.scripted import ScriptedModel
from tests.companion.test_honest_ending import asked, create, edit, ran, run, step
from tests.helpers.companion import env  # noqa: F401

MEAN = "def mean(xs):\n    return sum(xs) / (len(xs) - 1)\n"
GUARDED = "def mean(xs):\n    if not xs:\n        return 0\n    return sum(xs) / (len(xs) - 1)\n"
NOTES = "the quick brown fox jumps over the lazy dog and then it runs far away into the woods to hide\n"


async def test_a_check_that_prints_a_wrong_value_is_not_done(env: Any) -> None:  # noqa: F811
    # the 1.5B model added an empty-list guard and left `/ (len(xs) - 1)`; its own check printed
    # 3.0 and the run had ended "Done … checked"
    (env.root / "stats.py").write_text(MEAN)
    guard = step("guard the empty list", edit("stats.py", MEAN, GUARDED),
                 run('python3 -c "import stats; print(stats.mean([1,2,3]))"'))
    model = ScriptedModel([guard, step("fine", done=True), step("fine", done=True)], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(
        "The mean function in stats.py gives wrong results: mean([1, 2, 3]) should be 2. Fix it."),
        auto_approve_workspace=True)
    assert not out.success and out.result.kind == "not_done" and "Done" not in out.message
    task_call = 'python3 -c "import stats; print(stats.mean([1, 2, 3]))"'
    assert task_call in [c.call.arguments["command"] for c in ran(out)]  # the task's own call, run by the loop
    assert f"check failed: {task_call} → 3.0; the task says 2" in out.message
    assert out.result.expected == "mean([1, 2, 3]) returns 2" and out.result.seen == "'3.0'"
    assert "The check failed" in asked(model, 1)


async def test_the_wrong_value_fixed_is_done_and_says_which_expectation(env: Any) -> None:  # noqa: F811
    (env.root / "stats.py").write_text(MEAN)
    fixed = MEAN.replace("    return sum(xs) / (len(xs) - 1)\n", "    return sum(xs) / len(xs)\n")
    model = ScriptedModel([step("fix it", edit("stats.py", MEAN, fixed),
                                run('python3 -c "import stats; print(stats.mean([1,2,3]))"'))], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(
        "The mean function in stats.py gives wrong results: mean([1, 2, 3]) should be 2. Fix it."),
        auto_approve_workspace=True)
    assert out.success and out.result.kind == "done", out.message
    assert out.message.splitlines()[-1].startswith("Done — checked: ")
    assert "as the task expects: mean([1, 2, 3]) returns 2" in out.message


async def test_a_script_that_prints_nothing_is_not_done(env: Any) -> None:  # noqa: F811
    # wordcount.py defined count_words and printed nothing (→ exit 0, 0 lines); the run said Done
    (env.root / "notes.txt").write_text(NOTES)
    quiet = "def count_words(path):\n    with open(path) as f:\n        return len(f.read().split())\n"
    model = ScriptedModel([step("write it", create("wordcount.py", quiet), run("python3 wordcount.py"))] * 4,
                          name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message("Write a script that counts the words in notes.txt."),
                      auto_approve_workspace=True)
    assert not out.success and out.result.kind == "not_done" and "Done" not in out.message
    assert "python3 wordcount.py → printed nothing; words in notes.txt are 20" in out.message


async def test_the_word_count_script_that_prints_the_count_is_done(env: Any) -> None:  # noqa: F811
    (env.root / "notes.txt").write_text(NOTES)
    body = "with open('notes.txt') as f:\n    print(len(f.read().split()))\n"
    model = ScriptedModel([step("write it", create("wordcount.py", body), run("python3 wordcount.py"))], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message("Write a script that counts the words in notes.txt."),
                      auto_approve_workspace=True)
    assert out.success and out.result.kind == "done", out.message
    assert "as the task expects: it prints 20, the words in notes.txt" in out.message


async def test_a_check_the_model_picked_that_the_task_contradicts_is_not_evidence(env: Any) -> None:  # noqa: F811
    # the loop checked `print(wordcount.count_words('notes.txt'))`: it counted the words of the
    # string 'notes.txt' (1; the file has 20) and the run said Done
    (env.root / "notes.txt").write_text(NOTES)
    on_text = "def count_words(text):\n    return len(text.split())\n"
    model = ScriptedModel([
        step("write it", create("wordcount.py", on_text)),
        *[step("call it", run("python3 -c \"import wordcount; print(wordcount.count_words('notes.txt'))\""))] * 9,
    ], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message("Write wordcount.py that counts the words in notes.txt."),
                      auto_approve_workspace=True)
    assert not out.success and out.result.kind == "not_done" and "Done" not in out.message
    assert "count_words('notes.txt') was given the file's name, and count_words never opens a file" in out.message
    assert out.result.seen == "'1'" and "Say what to change" in out.message


async def test_every_task_ends_within_its_model_calls_and_says_what_it_tried(env: Any) -> None:  # noqa: F811
    from duckflow.companion.task import TaskBudget

    (env.root / "calc.py").write_text("print(1/0)\n")
    tries = [step(f"try {i}", edit("calc.py", "print(1/0)\n", "print(1/0)  # again\n"), done=False)
             for i in range(8)]
    model = ScriptedModel(tries, name="t")
    o = env.open(model, codec="symops", mode="single-call")
    said: list[str] = []
    o.session.chunks.subscribe(lambda c: said.append(c.data.message) if c.type == "notice" else None)
    out = await drive(o.session, o.session.handle_message("Fix calc.py so that it prints 0.5"),
                      auto_approve_workspace=True, budget=TaskBudget(max_calls=3, seconds=600))
    assert out.ending == "budget" and out.result.kind == "not_done" and "Done" not in out.message
    assert len(model.requests) <= 4  # a step in flight may finish with its one re-ask
    assert out.message.startswith("Not done — 3 model calls used")
    assert "the last thing it tried:" in out.message
    assert "Budget: up to 3 model calls and 10 min; then it ends with what it has." in said


async def test_a_task_whose_model_is_slower_than_its_time_budget_ends_on_time(env: Any) -> None:  # noqa: F811
    import time

    from duckflow.companion.task import TaskBudget

    model = ScriptedModel([step("write it", create("hello.py", "print('hi')\n"))], name="t", delay_s=30)
    o = env.open(model, codec="symops", mode="single-call")
    t0 = time.monotonic()
    out = await drive(o.session, o.session.handle_message("Create hello.py that prints hi"),
                      auto_approve_workspace=True, budget=TaskBudget(max_calls=10, seconds=1))
    assert time.monotonic() - t0 < 10
    assert out.ending == "budget" and out.result.kind == "not_done"
    assert out.message.startswith("Not done — out of time after 1 s") and "nothing changed yet" in out.message
    assert not (env.root / "hello.py").exists()


ANAGRAM = "def find_anagrams(word, candidates):\n    pass\n"
ANAGRAM_TEST = ("import unittest\n\nfrom anagram import find_anagrams\n\n\nclass AnagramTest(unittest.TestCase):\n"
                "    def test_one(self):\n        self.assertEqual(find_anagrams('listen', ['enlists', 'inlets']), "
                "['inlets'])\n")
EXERCISE = ("Use the above instructions to modify the supplied files: anagram.py. Don't change the names of existing "
            "functions or classes, as they may be referenced from unit tests or other code. Only use standard "
            "libraries. The tests are in anagram_test.py; do not change them.")
SOLVED = ("def find_anagrams(word, candidates):\n    w = word.lower()\n    return [c for c in candidates if c.lower() != w"
          " and sorted(c.lower()) == sorted(w)]\n")


async def test_a_reply_that_edits_the_named_test_file_is_asked_again(env: Any) -> None:  # noqa: F811
    # the bundled model wrote anagram_test.py under auto-approve after 7 of its 18 tests failed
    (env.root / "anagram.py").write_text(ANAGRAM)
    (env.root / "anagram_test.py").write_text(ANAGRAM_TEST)
    model = ScriptedModel([
        step("make the test pass", create("anagram_test.py", "import unittest\n")),
        step("solve it", create("anagram.py", SOLVED)),
    ], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(EXERCISE), auto_approve_workspace=True)
    assert (env.root / "anagram_test.py").read_text() == ANAGRAM_TEST  # never written
    assert ("anagram_test.py holds the task's tests: they say what the result must do, and they are not yours "
            "to change. Change anagram.py so that they pass.") in asked(model, 1)
    assert out.success and out.result.kind == "done", out.message
    assert "as the task expects: the tests in anagram_test.py pass" in out.message


async def test_the_named_test_file_is_read_only_in_the_two_call_mode_under_auto_approve(env: Any) -> None:  # noqa: F811
    from duckflow.companion.decision import MainDecision
    from duckflow.llm.types import ToolCall

    (env.root / "anagram.py").write_text(ANAGRAM)
    (env.root / "anagram_test.py").write_text(ANAGRAM_TEST)
    o = env.open([], mode="two-call")
    o.session.owner.change("task", lambda s: setattr(s, "task", EXERCISE))
    d = MainDecision(rationale="x", goal_consistency="yes", constraint_check="yes", next_step="continue",
                     step="EXECUTION", prompt_pattern="base_main_specialized")
    outs = await o.session._run_calls([ToolCall("write_file", {"path": "anagram_test.py", "content": "x\n"})], d)
    assert [x.status for x in outs] == ["refused"] and "not yours to change" in outs[0].content
    assert (env.root / "anagram_test.py").read_text() == ANAGRAM_TEST
    assert o.session.runner.gate.history(5) == []  # refused before the gate: nothing to auto-approve
    fine = await o.session._run_calls([ToolCall("write_file", {"path": "anagram.py", "content": SOLVED})], d)
    assert fine[0].status in ("ok", "pending")  # the code itself is the model's to change


ASSERT = 'python3 -c "import stats; got = stats.mean([1, 2, 3]); assert got == 2, got"'


async def test_test_first_the_assertion_fails_on_the_old_code_and_a_wrong_fix_is_not_done(env: Any) -> None:  # noqa: F811
    # "Fix it." names no value: the model writes the assertion first, seen failing on the old
    # code; the empty-list guard leaves it failing, and the model's own check (3.0) is no evidence
    (env.root / "stats.py").write_text(MEAN)
    model = ScriptedModel([
        step("the check first", run(ASSERT), done=False),
        step("guard the empty list", edit("stats.py", MEAN, GUARDED),
             run('python3 -c "import stats; print(stats.mean([1,2,3]))"')),
        step("guard it better", edit("stats.py", "    if not xs:\n        return 0\n",
                                     "    if len(xs) == 0:\n        return 0\n")),
    ], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message("The mean function in stats.py gives wrong results. Fix it."),
                      auto_approve_workspace=True)
    first = asked(model, 0)
    assert "Before changing anything, write the check the result must pass: call mean" in first
    assert ("The check failed: the task's check mean([1, 2, 3]) == 2 fails: it gave 3.0 (on the code as it is, "
            "before the change)") in asked(model, 1)
    assert not out.success and out.result.kind == "not_done" and "Done" not in out.message
    assert "the task's check mean([1, 2, 3]) == 2 fails: it gave 3.0" in out.message
    assert out.result.expected == "mean([1, 2, 3]) == 2"


async def test_test_first_the_right_fix_is_done_against_the_assertion(env: Any) -> None:  # noqa: F811
    (env.root / "stats.py").write_text(MEAN)
    model = ScriptedModel([
        step("the check first", run(ASSERT), done=False),
        step("fix the division", edit("stats.py", "    return sum(xs) / (len(xs) - 1)\n", "    return sum(xs) / len(xs)\n")),
    ], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message("The mean function in stats.py gives wrong results. Fix it."),
                      auto_approve_workspace=True)
    assert out.success and out.result.kind == "done", out.message
    assert [c.call.arguments["command"] for c in ran(out)] == [ASSERT, ASSERT]  # before and after the change
    assert out.message.endswith("as the task expects: mean([1, 2, 3]) == 2")


async def test_an_assertion_the_old_code_already_passes_is_no_expectation(env: Any) -> None:  # noqa: F811
    (env.root / "stats.py").write_text(MEAN)
    passes = 'python3 -c "import stats; got = stats.mean([2, 2]); assert got == 4, got"'  # (2+2)/1 == 4
    model = ScriptedModel([
        step("the check first", run(passes), done=False),
        step("fix the division", edit("stats.py", "    return sum(xs) / (len(xs) - 1)\n", "    return sum(xs) / len(xs)\n"),
             run('python3 -c "import stats; print(stats.mean([1, 2, 3]))"')),
    ], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message("The mean function in stats.py gives wrong results. Fix it."),
                      auto_approve_workspace=True)
    assert out.result.kind == "not_verified" and "Done" not in out.message
    assert "Finished, not verified — ran python3 -c \"import stats; print(stats.mean([1, 2, 3]))\"" in out.message


async def test_the_test_first_step_s_grammar_allows_only_an_assertion_the_gate_can_read(env: Any) -> None:  # noqa: F811
    from duckflow.gate.callcheck import call_check_module
    from tests.companion.test_honest_ending import _LocalScripted
    from tests.helpers.gbnf_walk import Walker

    (env.root / "stats.py").write_text(MEAN)
    model = _LocalScripted([step("the check first", run(ASSERT), done=False),
                            step("fix it", edit("stats.py", "    return sum(xs) / (len(xs) - 1)\n",
                                                "    return sum(xs) / len(xs)\n"))], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message("The mean function in stats.py gives wrong results. Fix it."),
                      auto_approve_workspace=True)
    assert out.result.kind == "done", out.message
    grammar = model.requests[0].settings.extra["grammar"]
    assert "assertrun" in grammar and "assertrun" not in model.requests[1].settings.extra["grammar"]
    assert '"{" ( akey ": " aval' in grammar  # a dict may be the answer (a word count)
    for seed in range(40):
        calls = o.session.codec.decode(Walker(grammar, seed=seed).sample(), o.session.runner.specs).calls
        assert [c.name for c in calls] == ["execute_shell"]
        command = calls[0].arguments["command"]
        assert command.startswith('python3 -c "import stats; got = stats.mean(') and command.endswith(', got"')
        import shlex

        assert call_check_module(shlex.split(command)[1:]) == "stats", command  # judged by stats.py's text


def test_aider_s_benchmark_prompt_keeps_the_exercise_s_tests_read_only() -> None:
    from duckflow.companion.checks import CheckLog
    from duckflow.companion.expect import protected

    aider = ("Use the above instructions to modify the supplied files: anagram.py Don't change the names of "
             "existing functions or classes, as they may be referenced from unit tests or other code. Only use "
             "standard libraries, don't suggest installing any packages.")
    files = ["anagram.py", "anagram_test.py", "README.md"]
    assert protected(aider, files, ["anagram.py"], CheckLog()) == {"anagram_test.py"}
    assert protected(EXERCISE, files, ["anagram.py", "anagram_test.py"], CheckLog()) == {"anagram_test.py"}
    # a task that asks for the tests to change lets the model write them
    assert protected("Add a test for anagram.py in anagram_test.py", files, ["anagram.py", "anagram_test.py"],
                     CheckLog()) == set()


async def test_test_first_an_error_of_the_old_code_is_the_check_failing_as_it_should(env: Any) -> None:  # noqa: F811
    # "parse '1h30m'": the old code raised ValueError on the assertion; it is the missing behaviour
    old = "def parse_duration(text):\n    if text.endswith('m'):\n        return int(text[:-1]) * 60\n    return int(text[:-1])\n"
    new = ("import re\n\n\ndef parse_duration(text):\n    units = {'h': 3600, 'm': 60, 's': 1}\n"
           "    return sum(int(n) * units[u] for n, u in re.findall(r'(\\d+)([hms])', text))\n")
    (env.root / "dur.py").write_text(old)
    check = "python3 -c \"import dur; got = dur.parse_duration('1h30m'); assert got == 5400, got\""
    model = ScriptedModel([step("the check first", run(check), done=False),
                           step("parse each part", create("dur.py", new))], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(
        "Make parse_duration in dur.py also understand combined durations like '1h30m'."), auto_approve_workspace=True)
    assert ("the task's check parse_duration('1h30m') == 5400 fails: it raised ValueError: invalid literal"
            in asked(model, 1))
    assert out.success and out.result.kind == "done", out.message
    assert out.message.endswith("as the task expects: parse_duration('1h30m') == 5400")


async def test_after_not_done_the_persons_words_reach_the_model_and_can_finish_it(env: Any) -> None:  # noqa: F811
    """"Not done … Say what to change": what the person then says goes to the model (the fixes
    start again with their words); before, the reply repeated the old ending with no model call."""
    (env.root / "stats.py").write_text(MEAN)
    check = 'python3 -c "import stats; print(stats.mean([1,2,3]))"'
    fixed = GUARDED.replace("(len(xs) - 1)", "len(xs)")
    model = ScriptedModel([step("guard the empty list", edit("stats.py", MEAN, GUARDED), run(check)),
                           step("fine", done=True), step("fine", done=True),
                           step("divide by the length", edit("stats.py", GUARDED, fixed), run(check))], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    first = await drive(o.session, o.session.handle_message(
        "The mean function in stats.py gives wrong results: mean([1, 2, 3]) should be 2. Fix it."),
        auto_approve_workspace=True)
    assert first.result.kind == "not_done" and "Say what to change" in first.message
    calls = o.session.engine.calls
    second = await drive(o.session, o.session.handle_message("It still gives 3.0; divide by len(xs)."),
                         auto_approve_workspace=True)
    assert o.session.engine.calls > calls  # the model was asked, with the person's words
    assert "divide by len(xs)" in asked(model, 3)
    assert second.result.kind == "done" and (env.root / "stats.py").read_text() == fixed, second.message
