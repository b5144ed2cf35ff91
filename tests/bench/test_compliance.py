"""The compliance bench's scoring on scripted replies: stages, exact actions, checks, guesses."""

from __future__ import annotations

import asyncio
from pathlib import Path

from duckflow.bench._compliance_tasks import TASKS
from duckflow.bench.compliance import Bench, apply_calls, check, exact_intended, setup, table
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
