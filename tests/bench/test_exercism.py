"""`duckflow bench exercism`'s own reading, judging and reporting, on a tiny exercise in exercism/python's layout.

No aider and no model here: Duckflow's side runs on ScriptedModel replies; aider's side is
only its argument list, its token lines and the one line that says it is skipped."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from benchmarks import exercism
from benchmarks._exercism import (
    Attempt,
    ExerciseError,
    Run,
    first_prompt,
    fresh_copy,
    judge,
    load_exercises,
    report,
    retry_prompt,
    summarize,
)

from duckflow.llm.scripted import ScriptedModel, reply


class LocalScripted(ScriptedModel):
    provider = "llamacpp"  # looks like llama.cpp's server on this machine: the single-call loop, as with local:default


STUB = "def add(a, b):\n    pass\n"
RIGHT = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return a - b\n"
TESTS = ("import unittest\n\nfrom adder import (\n    add,\n)\n\n\nclass AdderTest(unittest.TestCase):\n"
         "    def test_small(self):\n        self.assertEqual(add(1, 2), 3)\n\n"
         "    def test_zero(self):\n        self.assertEqual(add(0, 0), 0)\n")


def make_exercise(root: Path, slug: str = "adder") -> Path:
    ex = root / "exercises" / "practice" / slug
    (ex / ".docs").mkdir(parents=True)
    (ex / ".meta").mkdir()
    (ex / ".docs" / "introduction.md").write_text("# Introduction\n\nNumbers meet.\n")
    (ex / ".docs" / "instructions.md").write_text("# Instructions\n\nReturn the sum of two numbers.\n")
    (ex / ".meta" / "config.json").write_text(json.dumps(
        {"files": {"solution": [f"{slug}.py"], "test": [f"{slug}_test.py"], "example": [".meta/example.py"]}}))
    (ex / ".meta" / "example.py").write_text(RIGHT)
    (ex / f"{slug}.py").write_text(STUB)
    (ex / f"{slug}_test.py").write_text(TESTS.replace("adder", slug))
    return ex


def test_reads_the_layout_and_builds_aiders_prompt(tmp_path: Path) -> None:
    make_exercise(tmp_path)
    (ex,) = load_exercises(tmp_path)  # a clone's root: exercises/practice is found
    assert (ex.slug, ex.solution, ex.tests, ex.test_module) == ("adder", ("adder.py",), ("adder_test.py",), "adder_test")
    assert load_exercises(tmp_path / "exercises" / "practice")[0].slug == "adder"
    prompt = first_prompt(ex)
    assert prompt.index("Numbers meet.") < prompt.index("Return the sum") < prompt.index("modify the supplied files: adder.py")
    assert "Don't change the names of existing functions or classes" in prompt
    assert "Only use standard python libraries" in prompt
    output = "\n".join(f"line {i}" for i in range(80))
    again = retry_prompt(ex, output)
    assert "line 49" in again and "line 50" not in again  # the first 50 lines, as aider's benchmark shows them
    assert again.rstrip().endswith("Fix the code in adder.py to resolve the errors.")


def test_a_broken_exercise_is_one_clear_error(tmp_path: Path) -> None:
    ex = make_exercise(tmp_path)
    (ex / "adder_test.py").unlink()
    with pytest.raises(ExerciseError, match="adder_test.py named in .meta/config.json but not there"):
        load_exercises(tmp_path)
    with pytest.raises(ExerciseError, match="no exercise nope"):
        load_exercises(tmp_path, only=["nope"])


def test_the_judge_runs_the_shipped_tests_restored_first(tmp_path: Path) -> None:
    make_exercise(tmp_path)
    (ex,) = load_exercises(tmp_path)
    ws = fresh_copy(ex, tmp_path / "ws")
    assert sorted(p.name for p in ws.iterdir()) == ["adder.py", "adder_test.py"]  # no docs, no example
    passed, output = judge(ex, ws)
    assert not passed and "FAILED" in output
    (ws / "adder_test.py").write_text("import unittest\n")  # a system that empties the tests gains nothing
    (ws / "adder.py").write_text(WRONG)
    assert not judge(ex, ws)[0]
    assert "self.assertEqual(add(1, 2), 3)" in (ws / "adder_test.py").read_text()
    (ws / "adder.py").write_text(RIGHT)
    passed, output = judge(ex, ws)
    assert passed and "OK" in output


def write(content: str) -> str:
    return f"~ write it\n#c0.9 #m0.8 #f0.9 #s0.9\n$ write @ adder.py\n---\n{content}---\n~ next: DONE\n"


def test_duckflow_gets_the_test_output_once_and_pass_at_2_counts_it(tmp_path: Path) -> None:
    make_exercise(tmp_path)
    (ex,) = load_exercises(tmp_path)
    def step(messages: list) -> object:
        shown = any("See the testing errors above." in m.content for m in messages)
        return reply(write(RIGHT if shown else WRONG))  # right only once the test output was shown

    model = LocalScripted([step] * 40, name="bench")
    result = asyncio.run(exercism.bench([ex], ["duckflow"], model, "scripted:bench", aider=None, base_url="",
                                        out=tmp_path / "out.json", say=lambda _: None, mode="single-call"))
    (run,) = result["runs"]
    attempts = run["attempts"]
    assert [a["passed"] for a in attempts] == [False, True]
    assert attempts[0]["ending"] == "not_done"  # its own check of the tests failed: `run --json` says so
    asked = [m.content for r in model.requests for m in r.messages]
    assert any("See the testing errors above." in text and "FAILED" in text for text in asked)
    s = result["systems"]["duckflow"]
    assert (s["tasks"], s["pass1"], s["pass2"]) == (1, 0, 1)
    assert s["calls_per_task"] >= 2 and s["own_share"] is not None
    assert sum(c["passed"] + c["failed"] for c in s["endings"].values()) == 2
    assert json.loads((tmp_path / "out.json").read_text())["systems"]["duckflow"]["pass2"] == 1


def test_summary_and_report_count_every_ending_against_the_real_result() -> None:
    runs = [Run("duckflow", "a", [Attempt(True, 10.0, "done", 100, 20, 8.0, 2)]),
            Run("duckflow", "b", [Attempt(False, 30.0, "done", 300, 40, 20.0, 3), Attempt(True, 20.0, "done", 50, 10, 10.0, 1)]),
            Run("duckflow", "c", [Attempt(False, 5.0, "not_done", 10, 1, 4.0, 1), Attempt(False, 5.0, "unverified", 10, 1, 4.0, 1)])]
    s = summarize(runs)
    assert (s["pass1"], s["pass2"], s["pass1_pct"], s["pass2_pct"]) == (1, 2, 33.3, 66.7)
    assert s["median_s"] == 10.0 and (s["tokens_in"], s["tokens_out"]) == (470, 72)
    assert s["own_share"] == round(1 - 46 / 70, 3)
    assert s["endings"] == {"done": {"passed": 2, "failed": 1}, "not_done": {"passed": 0, "failed": 1},
                            "unverified": {"passed": 0, "failed": 1}}
    text = report({"systems": {"duckflow": s, "aider": {"tasks": 0, "skipped": "skipped: aider not found"}}})
    assert "| duckflow | 3 | 1 (33.3%) | 2 (66.7%) | 10.0 | 470 / 72 | 2.67 | 34.3% |" in text
    assert "| duckflow | done | 2 | 1 |" in text and "| aider | 0 | — |" in text


def test_the_ending_is_the_kind_duckflow_run_json_reports() -> None:
    assert exercism.ending_kind({"ending": "done", "result": {"kind": "not_verified", "evidence": "x"}}) == "not_verified"
    assert exercism.ending_kind({"ending": "max_turns", "result": None}) == "max_turns"


def test_aider_token_lines_and_arguments() -> None:
    out = "Tokens: 1.2k sent, 345 received.\n...\nTokens: 880 sent, 1.5k received. Cost: $0.00\n"
    assert exercism.aider_tokens(out) == (2080, 1845)
    assert exercism.aider_tokens("no usage line") == (0, 0)


def test_aider_missing_is_skipped_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_exercise(tmp_path)
    code = exercism.main(["--exercises", str(tmp_path), "--systems", "aider", "--aider", str(tmp_path / "no-aider"),
                          "--json"])
    assert code == 0
    captured = capsys.readouterr()
    assert captured.err.strip().count("\n") == 0 and "aider not found" in captured.err
    assert json.loads(captured.out)["systems"]["aider"]["tasks"] == 0


def test_bad_options_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert exercism.main(["--exercises", str(tmp_path / "missing")]) == 2
    assert "is not a folder" in capsys.readouterr().err
    assert exercism.main(["--systems", "cursor"]) == 2


async def test_the_recorder_runs_deterministically_but_keeps_the_loops_own_sampling() -> None:
    # the bench's calls run with seed 0, at temperature 0 where the loop names none; a temperature
    # and seed the loop sets (a re-ask sampling again) are kept, as the product sends them
    from benchmarks._tasktime import Recorder

    from duckflow.llm.scripted import ScriptedModel, reply
    from duckflow.llm.types import Message, ModelSettings

    inner = ScriptedModel([reply("a"), reply("b")], name="t")
    rec = Recorder(inner)
    for settings in (ModelSettings(max_tokens=50), ModelSettings(max_tokens=50, temperature=0.7, extra={"seed": 3})):
        async for _ in rec.stream([Message("user", "x")], settings=settings):
            pass
    plain, resampled = (r.settings for r in inner.requests)
    assert (plain.temperature, plain.extra["seed"]) == (0.0, 0)
    assert (resampled.temperature, resampled.extra["seed"]) == (0.7, 3)
    assert rec.replies == ["a", "b"]
