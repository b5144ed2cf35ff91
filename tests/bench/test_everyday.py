"""`bench everyday`: every hidden check fails on the workspace as it starts and passes on a right
answer; the report counts a "done" ending on a failing result as a false Done; a task runs
through `duckflow run` in a child process and is judged by its check."""

from __future__ import annotations

from pathlib import Path

from benchmarks._compliance_tasks import HELDOUT, TASKS
from benchmarks._everyday_tasks import ANSWERS, EARLIER, EVERYDAY, SETS
from benchmarks.compliance import check, setup
from benchmarks.everyday import report, run_task, summarize


def test_every_check_fails_as_it_starts_and_passes_on_a_right_answer(tmp_path: Path) -> None:
    assert len(EVERYDAY) == 12 and len(EARLIER) == 6 and SETS["all"] == EVERYDAY + EARLIER
    assert set(ANSWERS) == {t.name for t in SETS["all"]}
    assert not {t.text for t in SETS["all"]} & {t.text for t in (*TASKS, *HELDOUT)}  # a set of its own
    for task in SETS["all"]:
        root = tmp_path / task.name
        setup(task, root)
        assert not check(task, root), task.name
        for rel, text in ANSWERS[task.name].items():
            (root / rel).write_text(text, encoding="utf-8")
        assert check(task, root), task.name


def test_a_wrong_answer_fails_its_check(tmp_path: Path) -> None:
    """The checks compare values, not only that something ran: the median of an even list that
    prints, the total printed as a count of rows, a demo that still prints on import."""
    wrong = {"e_median": {"numstats.py": "def median(xs):\n    return sorted(xs)[len(xs) // 2] if xs else None\n\n\n"
                                         "def spread(xs):\n    return max(xs) - min(xs)\n"},
             "e_total": {"total.py": "print(5)\n"},
             "e_quiet": {"greetings.py": "def hello(name):\n    return f'Hello, {name}!'\n\n\nprint(hello('World'))\n"},
             # the test the task points at, edited to pass, is put back before the check runs
             "fix_test": {"test_slug.py": "def test_spaces():\n    assert True\n"},
             "rename": {"shop.py": "def compute_total(prices):\n    return sum(prices)\n"}}
    for name, files in wrong.items():
        task = next(t for t in SETS["all"] if t.name == name)
        root = tmp_path / name
        setup(task, root)
        for rel, text in files.items():
            (root / rel).write_text(text, encoding="utf-8")
        assert not check(task, root), name


def test_the_summary_counts_a_done_on_a_failing_result() -> None:
    rows = [{"task": "a", "passed": True, "ending": "done", "seconds": 10.0, "said": "Done", "note": "", "load_avg": 1.0},
            {"task": "b", "passed": False, "ending": "done", "seconds": 30.0, "said": "Done", "note": "", "load_avg": 1.0},
            {"task": "c", "passed": False, "ending": "not_done", "seconds": 20.0, "said": "Not done", "note": "",
             "load_avg": 1.0}]
    s = summarize(rows)
    assert (s["tasks"], s["passed"], s["false_done"], s["median_s"], s["max_s"]) == (3, 1, 1, 20.0, 30.0)
    assert s["endings"] == {"done": {"passed": 1, "failed": 1}, "not_done": {"passed": 0, "failed": 1}}
    text = report({"model": "m", "rows": rows, "summary": s})
    assert "passed 1/3 · false Dones 1" in text and "| done | 1 | 1 |" in text


def test_a_task_runs_through_duckflow_run_and_is_judged_by_its_check(tmp_path: Path) -> None:
    task = next(t for t in EVERYDAY if t.name == "e_total")
    row = run_task(task, tmp_path, "scripted:demo", 120)
    assert row["task"] == "e_total" and row["passed"] is False  # the demo model does not sum a column
    assert row["ending"] not in ("", "error", "timeout"), row  # the run came to its own ending
    assert row["seconds"] > 0 and (tmp_path / "ws" / "expenses.csv").is_file()
