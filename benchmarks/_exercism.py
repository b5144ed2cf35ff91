"""Exercism exercises for `bench exercism`: read exercism/python's layout, the prompt, a fresh copy, the judge, the report.

The layout is exercism/python's own (`exercises/practice/SLUG/`): `.docs/introduction.md`,
`.docs/instructions.md` and `.docs/instructions.append.md` (the last two optional but one must
be there), `.meta/config.json` naming the solution, test and example files, the stub and the
unittest file. The prompt is the one aider's benchmark sends (its benchmark/prompts.py, read for
the wording): the instructions, then "Use the above instructions to modify the supplied files:
F …"; after a failing attempt, the first 50 lines of the test output and "See the testing errors
above. The tests are correct. Fix the code in F to resolve the errors." The judge is the
exercise's own test file as shipped, restored before every run, `python -m unittest -q SLUG_test`
in the exercise's copy with aider's 180 s limit.
"""

from __future__ import annotations

import json
import math
import shutil
import statistics
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

TEST_TIMEOUT_S = 180  # aider's benchmark: 3 minutes per test run
ERROR_LINES = 50  # the test output shown for the second attempt, as aider's benchmark cuts it
DOCS = ("introduction.md", "instructions.md", "instructions.append.md")


@dataclass(frozen=True)
class Exercise:
    slug: str
    path: Path
    instructions: str
    solution: tuple[str, ...]
    tests: tuple[str, ...]

    @property
    def test_module(self) -> str:
        return Path(self.tests[0]).stem


class ExerciseError(ValueError):
    """An exercise folder that does not follow the layout (named in the message)."""


def practice_dir(root: Path) -> Path:
    """The folder of practice exercises: DIR itself, or DIR/exercises/practice in a clone of exercism/python."""
    nested = root / "exercises" / "practice"
    return nested if nested.is_dir() else root


def read_exercise(path: Path) -> Exercise:
    config = path / ".meta" / "config.json"
    try:
        files = json.loads(config.read_text(encoding="utf-8"))["files"]
        solution, tests = tuple(files["solution"]), tuple(files["test"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ExerciseError(f"{path.name}: .meta/config.json does not name its solution and test files ({exc})") from exc
    parts = [(path / ".docs" / name).read_text(encoding="utf-8").strip() for name in DOCS
             if (path / ".docs" / name).is_file()]
    if not parts or not solution or not tests:
        raise ExerciseError(f"{path.name}: no .docs/instructions.md, solution or test file")
    missing = [f for f in (*solution, *tests) if not (path / f).is_file()]
    if missing:
        raise ExerciseError(f"{path.name}: {', '.join(missing)} named in .meta/config.json but not there")
    return Exercise(path.name, path, "\n\n".join(parts) + "\n", solution, tests)


def load_exercises(root: Path, *, limit: int = 0, only: list[str] | None = None) -> list[Exercise]:
    """The exercises under `root` in name order (`only`: these slugs; `limit`: the first N)."""
    base = practice_dir(root)
    if not base.is_dir():
        raise ExerciseError(f"{root} is not a folder")
    slugs = sorted(p.name for p in base.iterdir() if (p / ".meta" / "config.json").is_file())
    if only:
        unknown = [s for s in only if s not in slugs]
        if unknown:
            raise ExerciseError(f"no exercise {', '.join(unknown)} in {base}")
        slugs = [s for s in slugs if s in only]
    if limit > 0:
        slugs = slugs[:limit]
    return [read_exercise(base / s) for s in slugs]


def first_prompt(ex: Exercise) -> str:
    files = " ".join(ex.solution)
    return (f"{ex.instructions}\n####\n\nUse the above instructions to modify the supplied files: {files}\n"
            "Don't change the names of existing functions or classes, as they may be referenced from other "
            "code like unit tests, etc.\nOnly use standard python libraries, don't suggest installing any packages.\n")


def retry_prompt(ex: Exercise, test_output: str) -> str:
    shown = "\n".join(test_output.splitlines()[:ERROR_LINES])
    return (f"{shown}\n\n####\n\nSee the testing errors above.\nThe tests are correct.\n"
            f"Fix the code in {' '.join(ex.solution)} to resolve the errors.\n")


def fresh_copy(ex: Exercise, dest: Path) -> Path:
    """The stub and the test file in an empty folder (no docs, no example solution)."""
    dest.mkdir(parents=True, exist_ok=True)
    for rel in (*ex.solution, *ex.tests):
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ex.path / rel, dest / rel)
    return dest


def test_command(ex: Exercise) -> list[str]:
    return [sys.executable, "-m", "unittest", "-q", ex.test_module]


def judge(ex: Exercise, ws: Path) -> tuple[bool, str]:
    """(passed, the test output): the shipped test files put back first, then the exercise's own tests."""
    for rel in ex.tests:
        shutil.copyfile(ex.path / rel, ws / rel)
    try:
        done = subprocess.run(test_command(ex), cwd=ws, capture_output=True, text=True, timeout=TEST_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return False, "Tests timed out!"
    return done.returncode == 0, (done.stdout + done.stderr).strip()


@dataclass
class Attempt:
    passed: bool
    seconds: float
    ending: str = ""  # the system's own ending kind ("" where it says none)
    tokens_in: int = 0
    tokens_out: int = 0
    model_s: float = 0.0  # time inside model calls (0 where it cannot be measured)
    calls: int = 0
    note: str = ""
    evaluated: int = 0  # prompt tokens llama.cpp evaluated (the rest reused from its KV cache)
    per_call: list[list[float]] = field(default_factory=list)  # [prompt, evaluated, generated, seconds] each


@dataclass
class Run:
    system: str
    slug: str
    attempts: list[Attempt] = field(default_factory=list)

    def row(self) -> dict[str, Any]:
        return {"system": self.system, "slug": self.slug, "attempts": [asdict(a) for a in self.attempts]}


def summarize(runs: list[Run]) -> dict[str, Any]:
    """One system's figures: pass@1, pass@2, median seconds per task, tokens, its own share, endings."""
    n = len(runs)
    if not n:
        return {"tasks": 0}
    wall: list[float] = [float(sum(a.seconds for a in r.attempts)) for r in runs]
    total = math.fsum(wall)
    model = math.fsum(a.model_s for r in runs for a in r.attempts)
    measured = any(a.calls for r in runs for a in r.attempts)  # model calls counted: its own share is known
    endings: dict[str, dict[str, int]] = {}
    for r in runs:
        for a in r.attempts:
            cell = endings.setdefault(a.ending or "(none)", {"passed": 0, "failed": 0})
            cell["passed" if a.passed else "failed"] += 1
    pass1 = sum(bool(r.attempts) and r.attempts[0].passed for r in runs)
    pass2 = sum(any(a.passed for a in r.attempts[:2]) for r in runs)
    return {
        "tasks": n, "pass1": pass1, "pass2": pass2,
        "pass1_pct": round(100 * pass1 / n, 1), "pass2_pct": round(100 * pass2 / n, 1),
        "median_s": round(statistics.median(wall), 1),
        "tokens_in": sum(a.tokens_in for r in runs for a in r.attempts),
        "tokens_out": sum(a.tokens_out for r in runs for a in r.attempts),
        "calls_per_task": round(sum(a.calls for r in runs for a in r.attempts) / n, 2),
        "evaluated_in": sum(a.evaluated for r in runs for a in r.attempts),
        "generated_per_call": _median_of([c[2] for r in runs for a in r.attempts for c in a.per_call]),
        "own_share": round(1 - model / total, 3) if measured and total else None,
        "endings": endings,
    }


def _median_of(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def report(result: dict[str, Any]) -> str:
    """The Markdown tables of a run: one line per system, then ending kind × real result."""
    lines = ["| system | tasks | pass@1 | pass@2 | median s/task | tokens in / out | calls/task | own share of wall time |",
             "|---|---|---|---|---|---|---|---|"]
    for name, s in result["systems"].items():
        if not s.get("tasks"):
            lines.append(f"| {name} | 0 | — | — | — | — | — | {s.get('skipped', '')} |")
            continue
        share = "—" if s["own_share"] is None else f"{s['own_share']:.1%}"
        calls = s["calls_per_task"] if s["own_share"] is not None else "—"  # aider's calls are not counted
        lines.append(f"| {name} | {s['tasks']} | {s['pass1']} ({s['pass1_pct']}%) | {s['pass2']} ({s['pass2_pct']}%) | "
                     f"{s['median_s']} | {s['tokens_in']} / {s['tokens_out']} | {calls} | {share} |")
    lines += ["", "| system | ending (every attempt) | tests passed | tests failed |", "|---|---|---|---|"]
    for name, s in result["systems"].items():
        for ending, cell in sorted((s.get("endings") or {}).items()):
            lines.append(f"| {name} | {ending} | {cell['passed']} | {cell['failed']} |")
    return "\n".join(lines)
