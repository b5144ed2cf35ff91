"""The single-call turn end to end: one Sym-Ops reply per step through the gate, tools and states."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from duckflow.companion.singlecall import build_step, choose_mode
from duckflow.companion.task import drive
from duckflow.llm.scripted import ScriptedModel, reply
from tests.helpers.companion import env, steps_of  # noqa: F401

CREATE_AND_RUN = (
    "~ write add.py and run it\n#c0.9 #m0.8 #f0.9 #s0.9\n"
    "$ create @ add.py\n---\ndef add(a, b):\n    return a + b\n\nprint(add(2, 3))\n---\n"
    "$ run @ python3 add.py\n~ next: DONE\n"
)


def texts(o: Any) -> list[str]:
    return [getattr(c.data, "text", "") or getattr(c.data, "message", "") for c in o.session.chunks.turn]


async def test_one_reply_creates_runs_and_finishes(env: Any, steps_of: Any) -> None:  # noqa: F811
    o = env.open([reply(CREATE_AND_RUN)], codec="symops", mode="single-call")
    assert o.session.mode == "single"
    out = await drive(o.session, o.session.handle_message("Create add.py that prints 2+3 using add(), run it"),
                      auto_approve_workspace=True)
    assert out.success, out.message
    assert (env.root / "add.py").read_text() == "def add(a, b):\n    return a + b\n\nprint(add(2, 3))\n"
    hist = steps_of(o)  # the write and the run each pass the gate (auto-approved here)
    assert hist[0] == "PLANNING>EXECUTION" and hist[-2:] == ["EXECUTION>REVIEW", "REVIEW>DONE"]
    ran = [x for r in out.results for x in r.outcomes if x.call.name == "execute_shell"]
    assert ran and ran[-1].status == "ok" and "5" in ran[-1].content
    assert o.session.state.task.startswith("Create add.py")  # the person's words stay the task
    model = o.session.model
    assert isinstance(model, ScriptedModel) and len(model.requests) == 1  # one call did the whole step


async def test_continue_then_done_and_a_failing_run_goes_back(env: Any, steps_of: Any) -> None:  # noqa: F811
    broken = ("~ write calc.py\n#c0.8 #m0.8 #f0.8 #s0.8\n$ create @ calc.py\n---\nprint(1/0)\n---\n"
              "$ run @ python3 calc.py\n~ next: DONE\n")  # DONE, but its run fails: not finished
    fixed = ("~ the run failed: fix the division\n#c0.7 #m0.7 #f0.9 #s0.8\n$ create @ calc.py\n---\n"
             "print(1/1)\n---\n$ run @ python3 calc.py\n~ next: CONTINUE\n")
    done = "~ it printed 1.0: finished\n#c0.9 #m0.9 #f0.9 #s0.8\n~ next: DONE\n"
    o = env.open([reply(broken), reply(fixed), reply(done)], codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message("Create calc.py printing a quotient and run it"),
                      auto_approve_workspace=True)
    assert out.success, out.message
    assert (env.root / "calc.py").read_text() == "print(1/1)\n"
    hist = steps_of(o)
    assert hist[0] == "PLANNING>EXECUTION" and hist[-1] == "REVIEW>DONE"
    model = o.session.model
    assert isinstance(model, ScriptedModel)
    second = model.requests[1].messages[-1].content
    # the failed run is evidence, with the END of its stderr (where the traceback names the error)
    assert "exit 1; stderr: …" in second and "ZeroDivisionError: division by zero" in second
    third = model.requests[2].messages[-1].content
    assert "Results so far" in third and "calc.py" in third
    assert "File calc.py:" in third  # the file's text is shown for the next step


async def test_a_copied_example_is_not_run(env: Any) -> None:  # noqa: F811
    copied = ("~ copy\n#c0.9 #m0.8 #f0.9 #s0.9\n$ create @ zeta_demo.py\n---\nfor zeta_number in range(1, 4):\n"
              "    print(zeta_number)\n---\n~ next: DONE\n")
    model = ScriptedModel([reply(copied)] * 3, name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message("Create count.py that prints 1 to 5"),
                      auto_approve_workspace=True)
    assert not out.success
    assert not (env.root / "zeta_demo.py").exists()
    assert any("copied the prompt's example" in t for r in out.results for t in
               [getattr(c.data, "message", "") for c in r.chunks])
    from duckflow.companion.editkind import COPIED
    assert model.requests[1].messages[-1].content == COPIED  # said as a copy, not as "no action"


async def test_the_examples_loop_variable_in_the_tasks_own_code_is_no_copy(env: Any) -> None:  # noqa: F811
    # the 1.5B named its loop variable as the example does; the file, the code and the task are its own
    own = ("~ write it\n#c0.9 #m0.8 #f0.9 #s0.9\n$ create @ count.py\n---\nfor zeta_number in range(1, 6):\n"
           "    print(zeta_number * 10)\n---\n$ run @ python3 count.py\n~ next: DONE\n")
    model = ScriptedModel([reply(own)] * 2, name="t")
    o = env.open(model, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message("Create count.py that prints 10, 20, 30, 40, 50"),
                      auto_approve_workspace=True)
    assert (env.root / "count.py").exists() and len(model.requests) == 1
    assert out.success, out.message
    # the example's own lines in the task's file are still a copy
    from duckflow.companion.editkind import copied_example
    from duckflow.llm.types import ToolCall
    example = "for zeta_number in range(1, 4):\n    print(zeta_number)\n"
    assert copied_example([ToolCall("write_file", {"path": "count.py", "content": example}, "1")], "Create count.py")
    assert not copied_example([ToolCall("write_file", {"path": "count.py", "content": example}, "1")],
                              "Rename zeta_number in count.py")


async def test_create_of_an_existing_file_is_an_overwrite_with_its_diff(env: Any) -> None:  # noqa: F811
    (env.root / "greet.py").write_text('print("hi")\n')
    again = "~ change the greeting\n#c0.9 #m0.8 #f0.9 #s0.9\n$ create @ greet.py\n---\nprint(\"hello\")\n---\n~ next: DONE\n"
    o = env.open([reply(again)], codec="symops", mode="single-call")
    res = await o.session.handle_message("Make greet.py print hello")
    assert res.pending is not None  # not auto-approved here: the gate asks
    diff = res.pending["request"]["diff_preview"]
    assert '-print("hi")' in diff and '+print("hello")' in diff
    notices = [c.data.message for c in res.chunks if c.type == "notice"]
    assert any("greet.py is overwritten" in n for n in notices)
    step = build_step(o.session, None)
    assert "File greet.py:" in step.messages[-1].content and '"greet.py"' in step.grammar


def test_grammar_of_a_step_names_the_tasks_paths_and_runs(env: Any) -> None:  # noqa: F811
    o = env.open([], codec="symops", mode="single-call")
    o.session.owner.change("task", lambda s: setattr(s, "task", "Create tools/fizz.py and run it"))
    g = build_step(o.session, None).grammar
    assert '"tools/fizz.py"' in g and '"python3 tools/fizz.py"' in g and "newname" not in g.split("root")[1][:40]
    assert "zeta" not in g
    o.session.owner.change("task", lambda s: setattr(s, "task", "write a script that prints the date"))
    assert "newname ::=" in build_step(o.session, None).grammar


def test_mode_auto_follows_the_model() -> None:
    scripted = ScriptedModel([], name="t")
    assert choose_mode(None, "auto", scripted) == "layered"
    assert choose_mode("single-call", "auto", scripted) == "single"

    class Local:
        provider, is_local, name = "local", True, "local:x"

        class info:  # noqa: N801
            params_b = 0.5

    assert choose_mode(None, "auto", Local()) == "single"
    Local.info.params_b = 7.0
    assert choose_mode(None, "auto", Local()) == "layered"
    assert choose_mode(None, "two_call", Local()) == "layered"


class _Trace:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def emit(self, event: str, *, session: str = "", agent: str = "", **fields: Any) -> None:
        self.events.append((event, fields))


async def test_the_raw_reply_is_traced_and_shown_under_debug(env: Any) -> None:  # noqa: F811
    from rich.console import Console

    from duckflow.channels.cli.render import Renderer

    trace = _Trace()
    o = env.open([reply(CREATE_AND_RUN)], codec="symops", mode="single-call", trace=trace)
    res = await o.session.handle_message("Create add.py that prints 2+3 using add(), run it")
    replies = [f for e, f in trace.events if e == "llm_reply"]
    assert replies and replies[0]["text"] == CREATE_AND_RUN and replies[0]["layer"] == "single"
    raw = [c for c in res.chunks if c.type == "notice" and c.data.code == "raw_reply"]
    assert raw and CREATE_AND_RUN in raw[0].data.message
    for debug in (False, True):
        console = Console(record=True, width=200)
        Renderer(console, debug=debug)(raw[0])
        assert ("$ create @ add.py" in console.export_text()) is debug


APPEND_DOUBLE = ("~ add double at the end\n#c0.9 #m0.8 #f0.9 #s0.9\n$ edit @ utils.py\n---\n<<<<<<< SEARCH\n"
                 "=======\n\n\ndef double(x):\n    return x * 2\n>>>>>>> REPLACE\n---\n~ next: DONE\n")


async def test_an_edit_with_hunks_changes_a_shown_file_and_keeps_the_rest(env: Any, steps_of: Any) -> None:  # noqa: F811
    (env.root / "utils.py").write_text("def half(x):\n    return x / 2\n")
    call = "~ call it\n#c0.9 #m0.8 #f0.9 #s0.9\n$ run @ python3 -c \"import utils; print(utils.double(4))\"\n~ next: DONE\n"
    o = env.open([reply(APPEND_DOUBLE), reply(call)], codec="symops", mode="single-call")
    o.session.owner.change("task", lambda s: setattr(s, "task", "Add a function double(x) to utils.py"))
    step = build_step(o.session, None)
    assert 'f0x0 ::= "def half(x):\\n" f0x1?' in step.grammar  # SEARCH can only hold the file's lines
    assert "edit ::= edit0" in step.grammar and '"python3 utils.py"' in step.grammar
    assert any("zeta_demo_twice" in m.content for m in step.messages[1:-1])  # the add example is shown
    o.session.owner.change("task", lambda s: setattr(s, "task", ""))
    out = await drive(o.session, o.session.handle_message("Add a function double(x) to utils.py"),
                      auto_approve_workspace=True)
    assert out.success, out.message
    assert (env.root / "utils.py").read_text() == (
        "def half(x):\n    return x / 2\n\n\ndef double(x):\n    return x * 2\n")
    edits = [x for r in out.results for x in r.outcomes if x.call.name == "edit_file"]
    assert edits and edits[-1].status == "ok" and '"hunks"' in edits[-1].content
    # a module of functions is checked by a call of the function the task names (asked for)
    model = o.session.model
    assert isinstance(model, ScriptedModel) and "call double with sample arguments" in \
        model.requests[1].messages[-1].content
    # the task names no value double(4) must give: finished, not verified (never "Done")
    assert out.result.kind == "not_verified" and "Done" not in out.message
    assert 'ran python3 -c "import utils; print(utils.double(4))", it printed \'8\'' in out.message


async def test_a_hunk_that_does_not_match_is_re_asked_with_the_closest_lines(env: Any) -> None:  # noqa: F811
    (env.root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    wrong = ("~ fix it\n#c0.9 #m0.8 #f0.9 #s0.9\n$ edit @ calc.py\n---\n<<<<<<< SEARCH\n    return a -- b\n"
             "=======\n    return a + b\n>>>>>>> REPLACE\n---\n~ next: DONE\n")
    right = wrong.replace("a -- b", "a - b")
    call = "~ call it\n#c0.9 #m0.8 #f0.9 #s0.9\n$ run @ python3 -c \"import calc; print(calc.add(2, 3))\"\n~ next: DONE\n"
    o = env.open([reply(wrong), reply(right), reply(call)], codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message("Fix the bug in calc.py so that add returns the sum"),
                      auto_approve_workspace=True)
    assert out.success, out.message
    assert (env.root / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    model = o.session.model
    assert isinstance(model, ScriptedModel) and len(model.requests) == 3
    again = model.requests[1].messages  # the same step, asked again: its reply, then why it failed
    assert again[-2].content == wrong and "Hunk 1 for calc.py did not apply" in again[-1].content
    assert "return a - b" in again[-1].content  # the closest real lines
    edits = [x for r in out.results for x in r.outcomes if x.call.name == "edit_file"]
    assert [e.status for e in edits] == ["pending", "ok"]  # the failing hunk never reached the gate
    assert out.result.kind == "not_verified" and "ran python3 -c" in out.message and "printed '5'" in out.message


async def test_a_test_file_runs_with_pytest(env: Any) -> None:  # noqa: F811
    (env.root / "slug.py").write_text("def slugify(t):\n    return t.lower().replace(' ', '-')\n")
    write_and_test = ("~ test slugify\n#c0.9 #m0.8 #f0.9 #s0.9\n$ create @ test_slug.py\n---\n"
                      "from slug import slugify\n\n\ndef test_slugify():\n    assert slugify('A b') == 'a-b'\n---\n"
                      "$ run @ python3 -m pytest -q test_slug.py\n~ next: DONE\n")
    o = env.open([reply(write_and_test)], codec="symops", mode="single-call")
    task = "Create test_slug.py with pytest tests for slug.py and run them"
    o.session.owner.change("task", lambda s: setattr(s, "task", task))
    g = build_step(o.session, None).grammar
    assert '"python3 -m pytest -q test_slug.py"' in g and '"python3 test_slug.py"' not in g
    assert '"$ test @ " ( "test_slug.py" )' in g
    o.session.owner.change("task", lambda s: setattr(s, "task", ""))
    out = await drive(o.session, o.session.handle_message(task), auto_approve_workspace=True)
    ran = [x for r in out.results for x in r.outcomes if x.call.name == "execute_shell"]
    assert out.success, [x.content[:900] for x in ran]
    assert ran and '"exit_code": 0' in ran[-1].content and "1 passed" in ran[-1].content


def test_the_edit_example_matches_the_kind_of_change(env: Any) -> None:  # noqa: F811
    (env.root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    o = env.open([], codec="symops", mode="single-call")
    shown = {}
    for task in ("Fix the bug in calc.py", "Add a function mul(a, b) to calc.py", "calc.py に関数を追加して",
                 "Delete calc.py, it is not needed"):
        o.session.owner.change("task", lambda s, t=task: setattr(s, "task", t))
        step = build_step(o.session, None)
        shown[task] = " ".join(m.content for m in step.messages[1:-1])
    assert "zeta_demo_twice" in shown["Add a function mul(a, b) to calc.py"]  # an append (empty SEARCH)
    assert "zeta_demo_twice" in shown["calc.py に関数を追加して"]
    assert "zeta_number = 5" in shown["Fix the bug in calc.py"] and "zeta_demo_twice" not in shown["Fix the bug in calc.py"]
    assert "SEARCH" not in shown["Delete calc.py, it is not needed"]  # a delete: no edit, no edit example


def test_the_edit_example_is_chosen_once_so_the_prefix_is_reused(env: Any) -> None:  # noqa: F811
    (env.root / "util.py").write_text("x = 1\n")
    o = env.open([], codec="symops", mode="single-call")
    o.session.owner.change("task", lambda s: setattr(s, "task", "Add a function f() to util.py"))
    one = build_step(o.session, None)
    (env.root / "util.py").unlink()  # the file is gone at the next step: the examples stay
    two = build_step(o.session, None)
    assert len(one.messages) == len(two.messages) == 6
    assert [m.content for m in one.messages[:5]] == [m.content for m in two.messages[:5]]


def test_the_demo_model_is_scripted_not_a_local_server() -> None:
    """`--model scripted:demo` runs two-call turns without being sized or constrained as a
    llama.cpp server (its backend is `scripted`)."""
    from duckflow.companion.demo_model import DemoModel
    from duckflow.llm.constrain import backend_of

    assert backend_of(DemoModel()) == "scripted"
    assert choose_mode(None, "auto", DemoModel(), "scripted:demo") == "layered"


def test_a_single_call_reply_that_runs_nothing_is_not_reported_as_ran_or_done(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The demo model does not speak single-call Sym-Ops: its one action is a guess that never
    runs. The run must say so and stop (exit 1), not claim the actions ran or the task is done."""
    from duckflow.channels.cli.main import main

    monkeypatch.setenv("DUCKFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DUCKFLOW_CONFIG", os.devnull)
    work = tmp_path / "w"
    work.mkdir()
    code = main(["run", "Create hello.py", "--model", "scripted:demo", "--mode", "single-call", "-w", str(work),
                 "--auto-approve-workspace"])
    out = capsys.readouterr().out
    assert code == 1 and not (work / "hello.py").exists()
    assert "the actions ran" not in out and "I stopped: the last turns changed nothing" in out


def test_the_edit_example_follows_what_the_task_adds() -> None:
    """A new function is appended (the empty-SEARCH example); a command-line option changes the
    code that reads the arguments (the replace example) — following the append example there,
    a small model wrote a second `def main()` or a block of imports."""
    from duckflow.companion.singlecall import edit_kind

    assert edit_kind("Add a function subtract(a, b) to calc.py") == "add"
    assert edit_kind("calc.py に関数 subtract を追加して") == "add"
    assert edit_kind("Add a --name option to greet.py so it greets that name") == "fix"
    assert edit_kind("Add a verbose flag to app.py") == "fix"
    assert edit_kind("Fix the bug in stats.py") == "fix"
    # the function's name is `add`: the task still replaces a line (the bundled model copied the
    # add example's empty SEARCH and changed nothing)
    assert edit_kind("Fix the bug in calc.py so that add returns the sum.") == "fix"
