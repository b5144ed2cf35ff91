"""Single-call tasks end honestly: DONE only after a check passed; each failure shape of issue 24."""

from __future__ import annotations

from typing import Any

from duckflow.companion.task import drive
from duckflow.llm.scripted import ScriptedModel, reply
from tests.helpers.companion import env  # noqa: F401

HEAD = "#c0.9 #m0.8 #f0.9 #s0.9\n"


def step(thought: str, *actions: str, done: bool = True) -> Any:
    return reply(f"~ {thought}\n{HEAD}" + "".join(actions) + f"~ next: {'DONE' if done else 'CONTINUE'}\n")


def create(path: str, text: str) -> str:
    return f"$ create @ {path}\n---\n{text}---\n"


def edit(path: str, search: str, replace: str) -> str:
    return f"$ edit @ {path}\n---\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n---\n"


def run(command: str) -> str:
    return f"$ run @ {command}\n"


def ran(out: Any, name: str = "execute_shell") -> list[Any]:
    return [o for r in out.results for o in r.outcomes if o.call.name == name and o.status in ("ok", "error")]


def asked(model: Any, i: int) -> str:
    return str(model.requests[i].messages[-1].content)


async def test_a_failed_run_re_issued_is_re_asked_then_run_again_and_never_ends_done(env: Any) -> None:  # noqa: F811
    again = step("run it again", run("python3 calc.py"))  # no fix: the same run, claiming DONE
    model = ScriptedModel([step("write and run", create("calc.py", "print(1/0)\n"), run("python3 calc.py")),
                           *[again] * 6], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message("Create calc.py printing a quotient"),
                      auto_approve_workspace=True)
    assert out.ending != "done" and not out.success
    # the same failing run with nothing changed is re-asked (twice), then run again: never dropped
    assert "nothing changed since: running it again gives the same error" in asked(model, 2)
    assert len(model.requests) == 7 and len(ran(out)) == 3
    assert "check failed: python3 calc.py → exit 1: ZeroDivisionError: division by zero" in out.message
    assert "after 2 fixes" in out.message and "Done" not in out.message
    assert "The check failed" in asked(model, 1) and "chance 1 of 2" in asked(model, 1)


async def test_a_module_of_functions_run_with_no_output_is_not_proof(env: Any) -> None:  # noqa: F811
    model = ScriptedModel([
        step("write greet", create("greet.py", "def greet(name):\n    return f'Hello, {name}!'\n"),
             run("python3 greet.py")),
        step("call it", run("python3 -c \"import greet; print(greet.greet('Bob'))\"")),
    ], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    task = "Create greet.py with a function greet(name) that returns 'Hello, NAME!'"
    out = await drive(o.session, o.session.handle_message(task), auto_approve_workspace=True)
    assert out.success, out.message
    assert "Now check greet.py: call greet with sample arguments" in asked(model, 1)
    calls = ran(out)
    assert calls[-1].call.arguments["command"].startswith("python3 -c") and "Hello, Bob!" in calls[-1].content
    assert "checked: python3 -c \"import greet; print(greet.greet('Bob'))\" → exit 0" in out.message


async def test_no_run_at_all_the_loop_runs_the_script_itself(env: Any) -> None:  # noqa: F811
    model = ScriptedModel([step("write it", create("hello.py", "print('Hello, World!')\n"))], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message("Create hello.py that prints Hello, World!"),
                      auto_approve_workspace=True)
    assert out.success, out.message
    assert len(model.requests) == 1  # the check needed no model call
    assert [c.call.arguments["command"] for c in ran(out)] == ["python3 hello.py"]
    assert "checked: python3 hello.py → exit 0, 1 line of output" in out.message


async def test_emptying_a_file_is_gated_as_destructive_not_low_risk(env: Any) -> None:  # noqa: F811
    body = "".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(4))
    (env.root / "stats.py").write_text(body)
    model = ScriptedModel([step("clean up", edit("stats.py", body, ""))] * 2, name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message("Tidy stats.py"), auto_approve_workspace=True)
    assert out.ending == "approval" and "a person must decide" in out.message  # never auto-approved
    req = out.results[0].pending["request"]
    assert req["risk"] == "high" and req["impact"].startswith("it empties stats.py (8 lines removed)")
    assert (env.root / "stats.py").read_text() == body


async def test_an_edit_whose_search_equals_replace_is_re_asked(env: Any) -> None:  # noqa: F811
    (env.root / "hello.py").write_text('print("Hello")\n')
    model = ScriptedModel([
        step("change it", edit("hello.py", 'print("Hello")\n', 'print("Hello")\n')),
        step("change it", edit("hello.py", 'print("Hello")\n', 'print("Goodbye")\n'), run("python3 hello.py")),
    ], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message("Change hello.py so that it prints Goodbye"),
                      auto_approve_workspace=True)
    assert out.success, out.message
    assert "changes nothing: its SEARCH and REPLACE are the same" in asked(model, 1)
    assert (env.root / "hello.py").read_text() == 'print("Goodbye")\n'
    assert "checked: python3 hello.py → exit 0, 1 line of output" in out.message


async def test_a_second_def_main_is_never_added_and_additions_go_before_the_main_block(env: Any) -> None:  # noqa: F811
    src = ("import sys\n\n\ndef main():\n    print('hi')\n\n\nif __name__ == \"__main__\":\n    main()\n")
    (env.root / "app.py").write_text(src)
    mixed = edit("app.py", "", "\n\nNAME = 'you'\n\n\ndef main():\n    print('hi', NAME)\n")
    again = edit("app.py", "", "\n\ndef main():\n    print('hi', name_of(sys.argv))\n")  # only main, again
    helper = edit("app.py", "", "\n\ndef name_of(args):\n    return args[1] if len(args) > 1 else 'you'\n")
    model = ScriptedModel([
        step("add the option", mixed),
        step("add the option", again, helper, run("python3 app.py Ann")),
    ], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message("Add a name option to app.py"), auto_approve_workspace=True)
    assert out.success, out.message
    assert "app.py already defines main" in asked(model, 1)  # a second main beside other code: re-asked
    text = (env.root / "app.py").read_text()
    assert text.count("def main") == 1 and "print('hi', name_of(sys.argv))" in text  # main itself replaced
    assert text.index("def name_of") < text.index("if __name__")  # not after the block that runs
    # the task names no result: it finished, and says it is not verified (never "Done")
    assert out.result.kind == "not_verified" and "Done" not in out.message
    assert "Finished, not verified — ran python3 app.py Ann, it printed 'hi Ann'" in out.message


async def test_editing_a_file_the_task_did_not_name_waits_for_a_person(env: Any) -> None:  # noqa: F811
    (env.root / "app.py").write_text("import json\n\nprint(json.load(open('app.json'))['port'])\n")
    (env.root / "app.json").write_text('{"port": 80}\n')
    model = ScriptedModel([step("change the port", edit("app.json", '{"port": 80}\n', '{"port": 8080}\n'))] * 2,
                          name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message("Make app.py print 8080"), auto_approve_workspace=True)
    assert out.ending == "approval"
    req = out.results[0].pending["request"]
    assert "app.json, a file the task did not name (app.py)" in req["impact"] and req["risk"] == "high"
    assert (env.root / "app.json").read_text() == '{"port": 80}\n'


async def test_deny_with_words_leads_to_a_new_proposal_and_done(env: Any) -> None:  # noqa: F811
    src = "def add(a, b):\n    return a + b\n\n\nprint(add(1, 2))\n"
    (env.root / "calc.py").write_text(src)
    at_end = edit("calc.py", "", "\n\ndef subtract(a, b):\n    return a - b\n")
    after_add = edit("calc.py", "    return a + b\n",
                     "    return a + b\n\n\ndef subtract(a, b):\n    return a - b\n")
    model = ScriptedModel([
        step("append subtract", at_end),
        step("append subtract", at_end),  # exactly the denied edit again: refused, asked again
        step("subtract right after add", after_add, run("python3 calc.py")),
    ], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    s = o.session
    first = await s.handle_message("Add a function subtract(a, b) to calc.py")
    assert first.pending is not None
    note = "put subtract right after add"
    denied = await s.answer_approval(False, note=note)
    assert denied.next_step == "continue" and note in denied.reply
    plan = s.owner.plans.latest()
    assert plan is not None and [a.state for a in plan.action_specs] == ["denied"]  # not left pending
    out = await drive(s, s.continue_task(observed=False), auto_approve_workspace=True)
    assert out.success, out.message
    assert note in asked(model, 1) and "The person said no to" in asked(model, 1)
    assert "The person said no to exactly this" in asked(model, 2)  # the repeat was refused with a reason
    text = (env.root / "calc.py").read_text()
    assert text.index("def subtract") < text.index("print(add(1, 2))")
    assert "Finished, not verified — ran python3 calc.py, it printed '3'" in out.message


async def test_a_change_nothing_could_check_waits_and_the_person_may_accept_it(env: Any) -> None:  # noqa: F811
    model = ScriptedModel([
        step("write greet", create("greet.py", "def greet(name):\n    return f'Hello, {name}!'\n")),
        step("it is fine"),  # asked for a call of the function: no action, DONE again
    ], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message("Create greet.py with a function greet(name)"),
                      auto_approve_workspace=True)
    assert out.ending == "input" and not out.success
    assert out.message.startswith("Not done — not checked:") and "Say \"done\" to accept it" in out.message
    accepted = await o.session.handle_message("done")
    assert accepted.next_step == "done" and len(model.requests) == 2  # no model call for the answer
    assert "accepted by the person as it is (not checked)" in accepted.reply


async def test_a_script_that_reads_its_arguments_is_run_by_the_model_with_sample_arguments(env: Any) -> None:  # noqa: F811
    model = ScriptedModel([
        step("write it", create("shout.py", "import sys\n\nprint(sys.argv[1].upper())\n")),
        step("run it", run("python3 shout.py hey")),
    ], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message("Create shout.py that prints its first argument in upper case"),
                      auto_approve_workspace=True)
    assert out.success, out.message
    assert "Now check shout.py: run it with sample arguments" in asked(model, 1)
    assert [c.call.arguments["command"] for c in ran(out)] == ["python3 shout.py hey"]  # never run bare
    assert "checked: python3 shout.py hey → exit 0, 1 line of output" in out.message


GREET = "import sys\n\n\ndef main():\n    print('Hello')\n\n\nif __name__ == '__main__':\n    main()\n"
WITH_NAME = ("import argparse\n\n\ndef main():\n    p = argparse.ArgumentParser()\n    p.add_argument('--name', default='World')\n"
             "    print(f'Hello, {p.parse_args().name}')\n\n\nif __name__ == '__main__':\n    main()\n")
NAME_TASK = "Add a --name option to greet.py so that it greets the name given"


async def test_a_run_without_the_option_the_task_adds_is_not_proof(env: Any) -> None:  # noqa: F811
    (env.root / "greet.py").write_text(GREET)
    model = ScriptedModel([
        step("add it", create("greet.py", WITH_NAME), run("python3 greet.py")),  # runs, but not with --name
        step("run it with the option", run("python3 greet.py --name Ann")),
    ], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(NAME_TASK), auto_approve_workspace=True)
    assert out.success, out.message
    assert "Now check greet.py: run it with --name and a sample value" in asked(model, 1)
    assert "Finished, not verified — ran python3 greet.py --name Ann, it printed 'Hello, Ann'" in out.message


async def test_never_running_the_option_ends_not_checked_not_done(env: Any) -> None:  # noqa: F811
    (env.root / "greet.py").write_text(GREET)
    model = ScriptedModel([
        step("add it", create("greet.py", WITH_NAME), run("python3 greet.py")),
        step("run it", run("python3 greet.py")),
        step("run it", run("python3 greet.py")),
    ], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(NAME_TASK), auto_approve_workspace=True)
    assert out.ending != "done" and not out.success
    assert "not checked: python3 greet.py ran without --name" in out.message and "Done" not in out.message


async def test_a_write_that_repeats_one_line_over_and_over_is_re_asked(env: Any) -> None:  # noqa: F811
    (env.root / "greet.py").write_text(GREET)
    loop = "import argparse\nimport sys\n" * 12
    model = ScriptedModel([
        step("add it", edit("greet.py", "import sys\n", loop), done=False),
        step("add it", create("greet.py", WITH_NAME), run("python3 greet.py --name Ann")),
    ], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(NAME_TASK), auto_approve_workspace=True)
    assert out.success, out.message
    assert "repeats `import argparse` 12 times" in asked(model, 1)
    assert (env.root / "greet.py").read_text() == WITH_NAME  # the looping edit never touched the file


async def test_a_reply_still_unusable_after_the_re_asks_is_said_in_plain_words(env: Any) -> None:  # noqa: F811
    (env.root / "greet.py").write_text(GREET)
    wrong = reply(f"{HEAD}" + edit("greet.py", "print('Hi')\n", "print('Hello, Ann!')\n") + "~ next: DONE\n")
    model = ScriptedModel([wrong, wrong, wrong], name="t")  # no thought, and a SEARCH that is not in the file
    o = env.open(model, codec="symops", mode="single-call")
    first = await o.session.handle_message(NAME_TASK)
    assert len(model.requests) == 3  # asked, then re-asked twice with the closest lines
    assert first.reply.startswith("I couldn't use the model's reply, even after asking again:")
    assert "greet.py" in first.reply and "no thought given" not in first.reply
    assert (env.root / "greet.py").read_text() == GREET


async def test_a_check_call_that_does_not_fit_the_function_is_called_again_not_fixed_in_the_code(
        env: Any) -> None:  # noqa: F811
    (env.root / "stats.py").write_text("def average(xs):\n    return sum(xs) / (len(xs) + 1)\n")
    fixed = edit("stats.py", "    return sum(xs) / (len(xs) + 1)\n", "    return sum(xs) / len(xs)\n")
    model = ScriptedModel([
        step("fix it and call it", fixed, run("python3 -c \"import stats; print(stats.average(2, 4))\"")),
        step("call it right", run("python3 -c \"import stats; print(stats.average([2, 4]))\"")),
    ], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message("Fix the bug in stats.py: average([2, 4]) should be 3"),
                      auto_approve_workspace=True)
    assert out.success, out.message
    second = asked(model, 1)
    assert "Your check call was wrong, not the code: TypeError: average() takes 1 positional argument" in second
    assert "stats.py defines average(xs)" in second and "The check failed" not in second
    assert (env.root / "stats.py").read_text() == "def average(xs):\n    return sum(xs) / len(xs)\n"
    assert "checked: python3 -c \"import stats; print(stats.average([2, 4]))\" → exit 0" in out.message


async def test_the_command_the_task_names_is_run_and_what_it_prints_is_compared(env: Any) -> None:  # noqa: F811
    (env.root / "greet.py").write_text(GREET)
    wrong = WITH_NAME.replace("print(f'Hello, {p.parse_args().name}')", "print('Hello, World')")
    model = ScriptedModel([
        step("add it", create("greet.py", wrong)),  # DONE with no run: the loop runs the task's own command
        step("fix it", create("greet.py", WITH_NAME)),
    ], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    task = "Add a --name option to greet.py so that `python3 greet.py --name Ann` prints Hello, Ann"
    out = await drive(o.session, o.session.handle_message(task), auto_approve_workspace=True)
    assert out.success, out.message
    second = asked(model, 1)
    assert "python3 greet.py --name Ann → printed 'Hello, World'; the task says it prints Hello, Ann" in second
    commands = [c.call.arguments["command"] for c in ran(out)]
    assert commands == ["python3 greet.py --name Ann", "python3 greet.py --name Ann"]  # no model call to check
    assert out.result.kind == "done" and out.message.endswith(
        "Done — checked: python3 greet.py --name Ann → exit 0, 1 line of output; as the task expects: "
        "python3 greet.py --name Ann prints Hello, Ann")


async def test_a_call_the_task_writes_out_is_the_check_and_its_value_is_compared(env: Any) -> None:  # noqa: F811
    (env.root / "stats.py").write_text("def average(xs):\n    return sum(xs) / (len(xs) + 1)\n")
    half = edit("stats.py", "    return sum(xs) / (len(xs) + 1)\n", "    return sum(xs) / (len(xs) * 1.5)\n")
    fixed = edit("stats.py", "    return sum(xs) / (len(xs) * 1.5)\n", "    return sum(xs) / len(xs)\n")
    model = ScriptedModel([
        step("fix the division", half, run("python3 stats.py")),  # runs nothing: the loop calls the task's call
        step("fix it again", fixed),
    ], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message("Fix the bug in stats.py: average([2, 4]) should return 3."),
                      auto_approve_workspace=True)
    assert out.success, out.message
    call = 'python3 -c "import stats; print(stats.average([2, 4]))"'
    assert f"check failed: {call} → 2.0; the task says 3" in asked(model, 1)
    assert [c.call.arguments["command"] for c in ran(out)] == ["python3 stats.py", call, call]
    assert f"checked: {call} → exit 0" in out.message


async def test_a_rename_is_written_by_the_loop_across_files_and_checked(env: Any) -> None:  # noqa: F811
    (env.root / "shop.py").write_text("def calc_total(prices):\n    return sum(prices)\n\n\ndef calc_totals(x):\n"
                                      "    return x\n")
    (env.root / "main.py").write_text("from shop import calc_total\n\nprint(calc_total([1, 2, 3]))\n")
    model = ScriptedModel([], name="t")  # never asked
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(
        "Rename the function calc_total to compute_total in shop.py and in main.py."), auto_approve_workspace=True)
    assert out.success, out.message
    assert model.requests == []
    assert (env.root / "main.py").read_text() == "from shop import compute_total\n\nprint(compute_total([1, 2, 3]))\n"
    assert "def compute_total(prices)" in (env.root / "shop.py").read_text()
    assert "def calc_totals(x)" in (env.root / "shop.py").read_text()  # whole words only
    assert out.result.kind == "not_verified" and "ran python3 main.py, it printed '6'" in out.message


async def test_a_denied_rename_goes_to_the_model(env: Any) -> None:  # noqa: F811
    (env.root / "shop.py").write_text("def calc_total(prices):\n    return sum(prices)\n\nprint(calc_total([1]))\n")
    model = ScriptedModel([step("ask", done=False)], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    s = o.session
    first = await s.handle_message("calc_total を compute_total にリネームして")
    assert first.pending is not None and model.requests == []  # the loop's edit, asked like any edit
    await s.answer_approval(False, note="call it total instead")
    await s.continue_task(observed=False)
    assert model.requests and "call it total instead" in str(model.requests[0].messages[-1].content)


async def test_text_the_task_quotes_must_be_in_what_the_script_prints(env: Any) -> None:  # noqa: F811
    model = ScriptedModel([
        step("count down", create("countdown.py", "for i in (3, 2, 1):\n    print(i)\n"), run("python3 countdown.py")),
        step("add liftoff", create("countdown.py", "for i in (3, 2, 1):\n    print(i)\nprint('Liftoff!')\n")),
    ], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message('Create countdown.py that prints 3, 2, 1 and then "Liftoff!".'),
                      auto_approve_workspace=True)
    assert out.success, out.message
    assert "check failed: python3 countdown.py → its output has no 'Liftoff!', which the task says it prints" \
        in asked(model, 1)
    assert "checked: python3 countdown.py → exit 0, 4 lines of output" in out.message


async def test_a_python_file_that_would_not_parse_is_re_asked(env: Any) -> None:  # noqa: F811
    junk = "python3 test_squares.py\n~ next: DONE\nThe complete file, every line\n"
    model = ScriptedModel([
        step("write it", create("squares.py", "for i in range(1, 6):\n    print(i * i)\n"), create("run_tests.py", junk)),
        step("write it", create("squares.py", "for i in range(1, 6):\n    print(i * i)\n")),
    ], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message("Create squares.py that prints the first five squares"),
                      auto_approve_workspace=True)
    assert out.success, out.message
    assert "run_tests.py would not be valid Python (line 1: invalid syntax)" in asked(model, 1)
    assert not (env.root / "run_tests.py").exists()


async def test_a_script_the_task_says_prints_must_print_something(env: Any) -> None:  # noqa: F811
    model = ScriptedModel([
        step("write it", create("shout.py", "def shout(text):\n    return text.upper()\n"), run("python3 shout.py hey")),
        step("read the argument", create("shout.py", "import sys\n\nprint(sys.argv[1].upper())\n"),
             run("python3 shout.py hey")),
    ], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(
        "Create shout.py that prints its first command-line argument in upper case."), auto_approve_workspace=True)
    assert out.success, out.message
    assert "check failed: python3 shout.py hey printed nothing; the task says shout.py prints something" \
        in asked(model, 1)
    assert "checked: python3 shout.py hey → exit 0, 1 line of output" in out.message


class _LocalScripted(ScriptedModel):
    """Looks like llama.cpp's server: the step's grammar is sent with each request."""

    provider = "llamacpp"


async def test_a_fix_round_s_grammar_allows_only_a_change_then_the_loop_checks_it(env: Any) -> None:  # noqa: F811
    # the 1.5B model re-ran `python3 shout.py hello` three times instead of changing the module of
    # functions it had written: in a fix round the grammar offers only create and edit
    from tests.helpers.gbnf_walk import Walker

    model = _LocalScripted([
        step("write it", create("shout.py", "def shout(t):\n    return t.upper()\n"), run("python3 shout.py hey")),
        step("add the top-level code", create("shout.py", "import sys\nprint(sys.argv[1].upper())\n")),
        step("run it", run("python3 shout.py hey")),
    ], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(
        "Create shout.py that prints its first command-line argument in upper case."), auto_approve_workspace=True)
    assert out.success, out.message
    first, fix = (model.requests[i].settings.extra["grammar"] for i in (0, 1))
    assert '"$ run @ ' in first and '"$ run @ ' not in fix and "$ test" not in fix
    assert "The check failed" in asked(model, 1) and "only defines functions" in asked(model, 1)
    for seed in range(30):  # whatever a constrained model could write in the fix round is a change
        decoded = o.session.codec.decode(Walker(fix, seed=seed).sample(), o.session.runner.specs)
        assert decoded.calls and {c.name for c in decoded.calls} <= {"write_file", "edit_file"}
    assert "checked: python3 shout.py hey → exit 0" in out.message and "HEY" in ran(out)[-1].content


async def test_a_task_that_names_no_file_can_run_the_script_the_model_names(env: Any) -> None:  # noqa: F811
    # with no file named there was no command to run: the 1.5B model wrote the script, then (the
    # grammar offering only creates) a test file and a runner file, and took 4 minutes to fail
    from tests.helpers.gbnf_walk import Walker

    model = _LocalScripted([step("write it", create("squares.py", "for i in range(1, 6):\n    print(i * i)\n"),
                                 run("python3 squares.py"))], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(
        "Write a Python script that prints the first five square numbers, one per line."),
        auto_approve_workspace=True)
    assert out.success, out.message
    grammar = model.requests[0].settings.extra["grammar"]
    assert '"python3 " newpy' in grammar
    runs = [c for seed in range(40) for c in o.session.codec.decode(
        Walker(grammar, seed=seed).sample(), o.session.runner.specs).calls if c.name == "execute_shell"]
    assert runs and all(c.arguments["command"].startswith("python3 ") and c.arguments["command"].split()[1]
                        .endswith(".py") for c in runs)
    assert "ran python3 squares.py, it printed '1' (and 4 more lines)" in out.message


async def test_a_reply_cut_off_while_repeating_a_line_is_asked_again_without_the_loop(env: Any) -> None:  # noqa: F811
    # the 1.5B model wrote `assert slugify("MultipleWords…") == …` until its 700-token bound, then
    # did the same on every re-ask that showed it its own looping reply
    from duckflow.channels.present import Presenter

    loop = '    assert slugify("MultipleWordsWithNumbers123") == "multiple-words-with-numbers123"\n'
    cut = f"~ write tests\n{HEAD}$ create @ test_slug.py\n---\nfrom slug import slugify\ndef test_a():\n" + loop * 14
    good = step("write tests", create("test_slug.py", "from slug import slugify\n\n\ndef test_a():\n"
                                      "    assert slugify(' A b') == 'a-b'\n"))
    model = _LocalScripted([reply(cut), good], name="t")
    (env.root / "slug.py").write_text("def slugify(text):\n    return text.strip().lower().replace(' ', '-')\n")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message("Create test_slug.py with pytest tests for slug.py"),
                      auto_approve_workspace=True)
    assert out.success, out.message
    again = model.requests[1]
    assert [m.role for m in again.messages] == [m.role for m in model.requests[0].messages]  # no looping reply shown
    assert "repeated `assert slugify(\"MultipleWordsWithNumbers123\")" in str(again.messages[-1].content)
    assert again.settings.extra["repeat_penalty"] == 1.1 and "repeat_penalty" not in model.requests[0].settings.extra
    # the tests are the model's own, written for the task: they ran, and are not the task's expectation
    assert "Finished, not verified — ran python3 -m pytest -q test_slug.py, it printed 1 passed" in out.message
    p = Presenter()
    shown = [ln.text for r in out.results for c in r.chunks for ln in p.feed(c) if ln.kind == "note"]
    assert "The model's reply could not be used; asking it again." in shown
    assert not any("unclosed_block" in t for t in shown)  # the reader's words stay under --verbose


async def test_a_script_told_to_print_its_argument_in_upper_case_is_checked_for_it(env: Any) -> None:  # noqa: F811
    # the 1.5B model's shout.py printed `hello` for `python3 shout.py hello` and the run said Done
    model = ScriptedModel([
        step("write it", create("shout.py", "import sys\nprint(sys.argv[1])\n"), run("python3 shout.py hello")),
        step("upper-case it", create("shout.py", "import sys\nprint(sys.argv[1].upper())\n")),
        step("run it", run("python3 shout.py hello")),
    ], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(
        "Create shout.py that prints its first command-line argument in upper case."), auto_approve_workspace=True)
    assert out.success, out.message
    assert ("check failed: python3 shout.py hello → printed 'hello'; the task says it prints the argument in "
            "upper case: 'HELLO'") in asked(model, 1)
    assert "checked: python3 shout.py hello → exit 0, 1 line of output" in out.message


def test_only_a_change_of_case_the_task_states_is_expected() -> None:
    from duckflow.companion.taskchecks import argument_output

    shout = "Create shout.py that prints its first command-line argument in upper case."
    assert argument_output(shout, "shout.py", "python3 shout.py hey you") == ("HEY", "in upper case")
    assert argument_output("Make low.py print its arguments in lowercase", "low.py", "python3 low.py A B") == (
        "a b", "in lower case")
    assert argument_output(shout, "shout.py", "python3 shout.py") == ("", "")  # no argument given
    assert argument_output(shout, "shout.py", "python3 shout.py HEY") == ("", "")  # nothing would change
    assert argument_output("Create echo.py that prints its first argument.", "echo.py",
                           "python3 echo.py hi") == ("", "")  # no case named: nothing to compare


async def test_fix_the_code_so_the_test_passes_never_offers_the_test_and_a_no_op_beside_a_fix_is_dropped(
        env: Any) -> None:  # noqa: F811
    # the 1.5B model's fix round changed slug.py and added a no-op edit of test_slug.py: the whole
    # reply was re-asked (twice, the same), the fix never ran; pytest's summary line had cut the
    # values the assert compared ('Hello-World' == 'h...)
    from tests.helpers.gbnf_walk import Walker

    (env.root / "slug.py").write_text("def slugify(text):\n    return text.lower()\n")
    test = "from slug import slugify\n\n\ndef test_spaces():\n    assert slugify('Hello World') == 'hello-world'\n"
    (env.root / "test_slug.py").write_text(test)
    same = "def test_spaces():\n    assert slugify('Hello World') == 'hello-world'\n"
    model = _LocalScripted([
        step("dashes", edit("slug.py", "    return text.lower()\n", "    return text.replace(' ', '-')\n"),
             run("python3 -m pytest -q test_slug.py")),
        step("lower case too", edit("slug.py", "    return text.replace(' ', '-')\n",
                                    "    return text.lower().replace(' ', '-')\n"), edit("test_slug.py", same, same)),
    ], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(
        "The test in test_slug.py fails. Fix slug.py so that it passes."), auto_approve_workspace=True)
    assert out.success, out.message
    assert len(model.requests) == 2  # the fix was used as it came: no re-ask for the no-op beside it
    assert ("slugify('Hello World') returned 'Hello-World', but the test expects 'hello-world'"  # not pytest's cut line
            in asked(model, 1))
    assert (env.root / "test_slug.py").read_text() == test
    assert "checked: python3 -m pytest -q test_slug.py → 1 passed" in out.message
    for i in (0, 1):  # neither step's grammar lets the model write the test it must pass
        grammar = model.requests[i].settings.extra["grammar"]
        for seed in range(30):
            calls = o.session.codec.decode(Walker(grammar, seed=seed).sample(), o.session.runner.specs).calls
            assert not [c for c in calls if c.name in ("write_file", "edit_file")
                        and c.arguments["path"] == "test_slug.py"]


async def test_the_same_edit_twice_in_one_reply_is_made_once(env: Any) -> None:  # noqa: F811
    # the 1.5B model wrote its fix of slug.py twice in one reply: the second failed on the first's
    # result ("SEARCH text not found … the REPLACE text is already in the file") and the step failed
    (env.root / "hello.py").write_text('print("Hello")\n')
    change = edit("hello.py", 'print("Hello")\n', 'print("Goodbye")\n')
    model = ScriptedModel([step("change it", change, change, run("python3 hello.py"))], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message("Change hello.py so that it prints Goodbye"),
                      auto_approve_workspace=True)
    assert out.success, out.message
    assert len(ran(out, "edit_file")) == 1 and not [o_ for r in out.results for o_ in r.outcomes
                                                     if o_.status == "error"]
    assert (env.root / "hello.py").read_text() == 'print("Goodbye")\n'


async def test_a_csv_file_s_header_row_is_pointed_out_to_the_model(env: Any) -> None:  # noqa: F811
    # the 1.5B model summed float(parts[1]) over every line of sales.csv, the header's "amount" too
    (env.root / "sales.csv").write_text("item,amount\napple,3\npear,4\nplum,5\n")
    (env.root / "plain.csv").write_text("3,4\n5,6\n")
    script = ("import csv\n\nwith open('sales.csv') as f:\n"
              "    print(sum(float(r['amount']) for r in csv.DictReader(f)))\n")
    model = ScriptedModel([step("sum it", create("total.py", script), run("python3 total.py"))], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(
        "Write total.py that prints the sum of the amount column in sales.csv, and the rows of plain.csv"),
        auto_approve_workspace=True)
    assert out.success, out.message
    prompt = str(model.requests[0].messages[-1].content)
    assert "(The first line of sales.csv is a header: item,amount. The values start on line 2.)" in prompt
    assert "plain.csv is a header" not in prompt  # numbers only: no header
    assert "12.0" in ran(out)[-1].content


async def test_a_fix_that_changed_nothing_is_not_done_however_well_the_old_code_runs(env: Any) -> None:  # noqa: F811
    # the 1.5B model ran countdown.py as it was (it printed 4, 3, 2) and the run said "Done"
    (env.root / "countdown.py").write_text("for i in range(3, 0, -1):\n    print(i + 1)\n")
    model = ScriptedModel([step("run it", run("python3 countdown.py"))] * 4, name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message("Fix the off-by-one bug in countdown.py."),
                      auto_approve_workspace=True)
    assert out.ending != "done" and not out.success and "Done" not in out.message
    assert "nothing was changed, and the task asks for a change" in out.message
    assert "Nothing has been changed yet, and the task asks for a change" in asked(model, 1)


async def test_lines_the_task_lists_are_what_the_script_must_print(env: Any) -> None:  # noqa: F811
    (env.root / "countdown.py").write_text("for i in range(3, 0, -1):\n    print(i + 1)\n")
    model = ScriptedModel([
        step("off by one", edit("countdown.py", "for i in range(3, 0, -1):\n", "for i in range(4, 1, -1):\n"),
             run("python3 countdown.py")),
        step("print i", edit("countdown.py", "for i in range(4, 1, -1):\n    print(i + 1)\n",
                             "for i in range(3, 0, -1):\n    print(i)\n")),
    ], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(
        "Fix countdown.py so that it prints 3, 2, 1 on separate lines."), auto_approve_workspace=True)
    assert out.success, out.message
    assert ("check failed: python3 countdown.py → printed 5, 4, 3; the task says it prints 3, 2, 1, one per line"
            in asked(model, 1))
    assert "checked: python3 countdown.py → exit 0, 3 lines of output" in out.message


async def test_an_added_option_without_a_default_that_prints_none_is_a_failed_check(env: Any) -> None:  # noqa: F811
    # the 1.5B model's --name had no default: `python3 greet.py` printed "Hello, None!", then the run
    # with --name passed and the task said Done
    src = "def main():\n    print('Hello, World!')\n\n\nif __name__ == '__main__':\n    main()\n"
    (env.root / "greet.py").write_text(src)
    body = ("    import argparse\n    p = argparse.ArgumentParser()\n    p.add_argument('--name'{})\n"
            "    print(f'Hello, {{p.parse_args().name}}!')\n")
    model = ScriptedModel([
        step("add it", edit("greet.py", "    print('Hello, World!')\n", body.format("")),
             run("python3 greet.py"), run("python3 greet.py --name Ann")),
        step("a default", edit("greet.py", "    p.add_argument('--name')\n",
                               "    p.add_argument('--name', default='World')\n")),
    ], name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message(
        "Add a --name option to greet.py so that `python3 greet.py --name Ann` prints Hello, Ann!"),
        auto_approve_workspace=True)
    assert out.success, out.message
    assert ("check failed: python3 greet.py (without --name) → printed 'Hello, None!': give --name a default"
            in asked(model, 1))
    assert "checked: python3 greet.py --name Ann → exit 0" in out.message


async def test_code_written_over_a_data_file_waits_for_a_person(env: Any) -> None:  # noqa: F811
    # asked to make main.py print data.txt, the 1.5B model replaced data.txt's three lines with its
    # code, auto-approved ("removes most of a file" counts files of 4+ lines)
    (env.root / "data.txt").write_text("apples\npears\nplums\n")
    code = "with open('data.txt') as f:\n    print(f.read())\n"
    model = ScriptedModel([step("read it", edit("data.txt", "apples\npears\nplums\n", code))] * 2, name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message("Make main.py print the contents of data.txt."),
                      auto_approve_workspace=True)
    assert out.ending == "approval" and "a person must decide" in out.message  # never auto-approved
    req = out.results[0].pending["request"]
    assert req["risk"] == "high" and req["impact"].startswith("it replaces the data in data.txt with program code")
    assert (env.root / "data.txt").read_text() == "apples\npears\nplums\n"


def test_a_data_file_edited_as_data_is_not_called_code() -> None:
    from duckflow.companion.fivepoints import _code_into_data

    assert not _code_into_data("config.json", '{"port": 80}\n', '{"port": 9000}\n')
    assert not _code_into_data("notes.md", "# Notes\n", "# Notes\n\nRun `print(1)` to try it.\n")
    assert not _code_into_data("main.py", "x = 1\n", "print(1)\n")  # code files are code
    assert _code_into_data("sales.csv", "item,amount\napple,3\n", "import csv\nprint(sum(1 for _ in open('s')))\n")
