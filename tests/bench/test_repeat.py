"""`duckflow bench repeat N NAME...`: pass counts and ratio spreads over repeated runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchmarks import repeat
from benchmarks.server import Level, combine, round_ratio


def _run(passed: bool, load: list[float], ratios: dict[str, float]) -> dict[str, object]:
    return {"passed": passed, "exit": 0 if passed else 1, "load": load, "seconds": 10.0,
            "ratios": {k: {"bar": k, "value": v, "limit": 0.1, "pass": v <= 0.1} for k, v in ratios.items()}}


def test_table_counts_passes_and_spreads_each_ratio_over_the_runs() -> None:
    runs = [_run(True, [3.0, 4.5], {"run": 0.08}), _run(False, [9.0, 12.2], {"run": 0.12}),
            _run(True, [6.0, 6.0], {"run": 0.09})]
    text = repeat.table("engine", ["--require-peers"], runs)
    assert "`duckflow bench engine --json --require-peers` × 3: **2/3 passed**, load average 3.0–12.2" in text
    assert "| run | 0.1 | 0.08 | 0.09 | 0.12 | 2/3 |" in text
    assert "Failed: run 2: exit 1" in text
    row = repeat.summary_row("engine", ["--require-peers"], runs)
    assert row == "| engine --require-peers | **2/3** | 3.0–12.2 | run (≤ 0.1): 0.08 / 0.09 / 0.12 |"


def test_ratios_are_read_from_every_report_shape() -> None:
    report = {"ratios": [{"bar": "a", "value": 2.0, "limit": 5.0, "pass": True}]}
    assert repeat.ratios_of("security", report) == {"a": report["ratios"][0]}
    startup = {"run_demo": {"ratio_to_floor": {"median": 3.4}, "bar": 3.0},
               "public_import": {"ratio_to_floor": {"median": 0.8}, "bar": 1.2}}
    got = repeat.ratios_of("startup", startup)
    assert got["run / floor CLI"]["pass"] is False and got["import / floor import"]["pass"] is True


def test_unknown_bench_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert repeat.main(["2", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert "unknown bench 'nosuch'" in err and "engine" in err and "Traceback" not in err


def test_repeat_runs_a_real_bench_and_reports_its_exit_codes(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "runs.json"
    rc = repeat.main(["2", "protocols", "--args=--quick", "--out", str(out)])
    text = capsys.readouterr().out
    runs = json.loads(out.read_text())["protocols"]
    assert len(runs) == 2 and all(r["exit"] in (0, 1) for r in runs)
    assert rc == (0 if all(r["passed"] for r in runs) else 1)
    assert f"**{sum(r['passed'] for r in runs)}/2 passed**" in text
    assert "stream_actions_time_ratio" in runs[0]["ratios"] and "| stream_prose_time_ratio | 3.0 |" in text


def _level(n: int, p99: float, errors: int = 0) -> Level:
    return Level(n, p99 / 2, p99, p99, p99, 5 * n, 100.0, 1.0, errors, 0)


def test_server_ratio_per_round_and_levels_combined_over_rounds() -> None:
    rounds = [[_level(10, 20.0), _level(500, 180.0)], [_level(10, 40.0), _level(500, 200.0, errors=1)],
              [_level(10, 30.0), _level(500, 240.0)]]
    assert [round_ratio(r) for r in rounds] == [9.0, 5.0, 8.0]
    levels = combine(rounds)
    assert levels[0]["ttfc_p99_ms"] == 30.0 and levels[1]["ttfc_p99_ms"] == 200.0
    assert levels[1]["ttfc_p99_ms_per_round"] == [180.0, 200.0, 240.0] and levels[1]["errors"] == 1
