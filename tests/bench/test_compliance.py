"""The compliance bench's scoring on scripted replies: stages, exact actions, checks, guesses."""

from __future__ import annotations

import asyncio
from pathlib import Path

from benchmarks._compliance_tasks import TASKS
from benchmarks.compliance import Bench, apply_calls, check, exact_intended, setup, table

from duckflow.llm.scripted import ScriptedModel, reply
from duckflow.llm.types import ToolCall

HELLO = next(t for t in TASKS if t.name == "hello")
GOOD = ('~ write it\n#c0.9 #m0.8 #f0.9 #s0.9\n$ create @ hello.py\n---\nprint("Hello, World!")\n---\n'
        "$ run @ python3 hello.py\n~ next: DONE\n")
MESSY = 'Sure! Here is the file:\n\n```python\nprint("Hello, World!")\n```\n'  # no action declared


def test_every_task_has_a_check_that_fails_on_an_empty_workspace(tmp_path: Path) -> None:
    assert len(TASKS) >= 20
    for task in TASKS:
        root = tmp_path / task.name
        setup(task, root)
        assert not check(task, root) or task.name == "run_existing", task.name


def test_the_checks_pass_on_a_right_answer(tmp_path: Path) -> None:
    fix = next(t for t in TASKS if t.name == "fix_mul")
    setup(fix, tmp_path)
    apply_calls(tmp_path, [ToolCall("write_file", {"path": "calc.py", "content": "def mul(a, b):\n    return a * b\n"})])
    assert check(fix, tmp_path)
    assert exact_intended([ToolCall("write_file", {"path": "calc.py", "content": ""})], fix)
    assert not exact_intended([ToolCall("write_file", {"path": "other.py", "content": ""})], fix)


def test_stages_score_a_messy_reply_and_the_live_path(tmp_path: Path, monkeypatch: object) -> None:
    model = ScriptedModel([reply(MESSY), reply(MESSY), reply(GOOD)], name="bench")
    bench = Bench("scripted:bench", ["symops"], ["single-call"], [HELLO])
    asyncio.run(bench.run(model, lambda _: None))
    cells = {(c["stage"]): c for c in bench.result()["cells"]}
    assert cells["raw"]["well_formed"] == 0 and cells["raw"]["passed"] == 0
    # the fenced code with no action line is a guess: found, never run
    assert cells["+fuzzy"]["runnable_guesses"] == 0 and cells["+fuzzy"]["passed"] == 0
    assert cells["+self-correction"]["tasks"] == 1
    live = cells["+grammar"]
    assert live["well_formed"] == 1 and live["exact"] == 1 and live["passed"] == 1
    assert "| symops | single-call | +grammar | 1/1 | 1/1 | 1/1 | 0 |" in table(bench.result())


class LocalScripted(ScriptedModel):
    provider = "llamacpp"  # looks like llama.cpp's server on this machine: grammars are sent


DML_GOOD = ('Thought: write it\nAction:\n🦆▶️[T:write_file|hello.py|\nprint("Hello, World!")\n]◀️🦆\n'
            "🦆▶️[T:execute_shell|python3 hello.py]◀️🦆\nNext: DONE\n")


def test_the_dml_live_single_call_cell_runs_with_the_dml_grammar() -> None:
    model = LocalScripted([reply(DML_GOOD)], name="bench")
    bench = Bench("scripted:bench", ["dml"], ["single-call"], [HELLO], stages="live")
    asyncio.run(bench.run(model, lambda _: None))
    (cell,) = bench.result()["cells"]
    assert (cell["protocol"], cell["mode"], cell["stage"]) == ("dml", "single-call", "+grammar")
    assert cell["well_formed"] == 1 and cell["exact"] == 1 and cell["passed"] == 1
    (req,) = model.requests
    assert req.settings is not None and '"🦆▶️[T:write_file"' in req.settings.extra["grammar"]


# a right answer for every held-out task: each check must pass on it and fail on the untouched workspace
HELDOUT_ANSWERS = {
    "h_greet": {"greet.py": "def greet(name):\n    return f'Hello, {name}!'\n"},
    "h_count": {"count.py": "for i in range(1, 11):\n    print(i)\n"},
    "h_fix_add": {"calc.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"},
    "h_double": {"mathutils.py": "def square(x):\n    return x * x\n\n\ndef double(x):\n    return x * 2\n"},
    "h_test_slug": {"test_slug.py": "from slug import slugify\n\n\ndef test_it():\n    assert slugify(' A b') == 'a-b'\n"},
    "h_show_data": {"main.py": "print(open('data.txt').read())\n"},
    "h_japanese": {"hello.py": "print('こんにちは')\n"},
    "h_subfolder": {"src/app.py": "def main():\n    return 42\n"},
    "h_no_name": {"squares.py": "for i in range(1, 6):\n    print(i * i)\n"},
    "h_mean": {"stats.py": "def mean(numbers):\n    return sum(numbers) / len(numbers)\n"},
    "h_goodbye": {"hello.py": "print('Goodbye')\n"},
    "h_shout": {"shout.py": "import sys\nprint(sys.argv[1].upper())\n"},
    "h_counter": {"counter.py": "class Counter:\n    def __init__(self):\n        self.value = 0\n\n"
                                "    def increment(self):\n        self.value += 1\n"},
    "h_syntax": {"main.py": "print('ready')\n"},
    "h_notes": {"notes.txt": "buy milk\n"},
    "h_fix_tests": {"temp.py": "def c_to_f(c):\n    return c * 9 / 5 + 32\n"},
    "h_is_even_ja": {"utils.py": "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n\n\n"
                                 "def is_even(n):\n    return n % 2 == 0\n"},
    "h_countdown": {"countdown.py": "for i in (3, 2, 1):\n    print(i)\nprint('Liftoff!')\n"},
}


def test_heldout_checks_fail_untouched_and_pass_on_a_right_answer(tmp_path: Path) -> None:
    from benchmarks._compliance_tasks import HELDOUT, SETS

    assert len(HELDOUT) >= 15 and SETS["heldout"] is HELDOUT
    assert not {t.text for t in HELDOUT} & {t.text for t in TASKS}  # a different set
    assert set(HELDOUT_ANSWERS) == {t.name for t in HELDOUT}
    for task in HELDOUT:
        root = tmp_path / task.name
        setup(task, root)
        assert not check(task, root), task.name
        calls = [ToolCall("write_file", {"path": p, "content": c}) for p, c in HELDOUT_ANSWERS[task.name].items()]
        apply_calls(root, calls)
        assert check(task, root), task.name
        if not any(n == "execute_shell" for n, _ in task.intended):
            assert exact_intended(calls, task), task.name


def test_the_live_cells_say_where_the_time_went() -> None:
    model = ScriptedModel([reply(GOOD)], name="bench")
    bench = Bench("scripted:bench", ["symops"], ["single-call"], [HELLO], stages="live")
    asyncio.run(bench.run(model, lambda _: None))
    (row,) = bench.result()["timing"]
    s = row["summary"]
    assert (row["model"], row["stage"], s["tasks"], s["passed"], s["pass_rate"]) == ("scripted:bench", "+grammar", 1, 1, 1.0)
    (task,) = row["tasks"]
    assert task["task"] == "hello" and task["passed"] and len(task["calls"]) == s["calls_per_task"] >= 1
    assert 0 <= task["model_s"] <= task["wall_s"] and 0 < s["duckflow_share"] <= 1  # a scripted model is instant
    assert s["median_prompt_tokens"] > 0  # the scripted model's own usage
    assert task["checked"] == "done" and s["checked"]["done"] == 1, task["checked"]  # the run's own ending
    assert s["done_on_a_failure"] == 0
    assert "| scripted:bench | symops · single-call · +grammar | 1/1 |" in table_of(bench)


def table_of(bench: Bench) -> str:
    from benchmarks._tasktime import report_table

    return report_table(bench.result()["timing"])


def test_one_report_for_two_models_and_the_recorded_replies(capsys: object) -> None:
    from benchmarks.compliance import main

    assert main(["--models", "scripted:demo,scripted:demo", "--modes", "single-call", "--stages", "live",
                 "--limit", "1"]) == 0
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    rows = [line for line in out.splitlines() if line.startswith("| scripted:demo | symops · single-call")]
    assert len(rows) == 2  # one line per model in the one report
    import re

    assert re.search(r"\| \d+ \(—\) \| — \|", rows[0])  # a scripted model has no own timing: —, not 0
    assert "| recorded replies (well-formed / exact intended) |" in out and "| local (" in out
