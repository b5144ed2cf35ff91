"""`duckflow bench startup`: the floors are printed beside Duckflow's figures, bars are paired ratios."""

from __future__ import annotations

import itertools
import os
from typing import Any

import pytest
from benchmarks import startup


def _fake_child(seconds: dict[str, float], seen_env: list[dict[str, str]]) -> Any:
    tick = itertools.count()

    def child(argv: list[str], env: dict[str, str], cwd: str | None = None) -> tuple[float, float]:
        seen_env.append(env)
        code = "run" if "run" in argv else argv[-1]
        jitter = 1.0 + 0.01 * (next(tick) % 3)
        key = {"run": "run", startup.FLOOR_CLI: "floor_cli", startup.FLOOR_IMPORT: "floor_import"}.get(code, "public")
        return seconds[key] * jitter, 45.0

    return child


def test_prints_both_floors_with_min_median_max_and_the_load(monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    seen: list[dict[str, str]] = []
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setattr(startup, "_child", _fake_child(
        {"run": 0.20, "floor_cli": 0.10, "public": 0.07, "floor_import": 0.08}, seen))
    assert startup.main(["--rounds", "3"]) == 0
    out = capsys.readouterr().out
    assert "load [" in out and "interleaved rounds" in out
    assert f"floor `{startup.FLOOR_CLI}`" in out and f"floor `{startup.FLOOR_IMPORT}`" in out
    assert out.count("min ") >= 6 and "median" in out and "max" in out
    assert "PASS" in out.splitlines()[-1]
    # bytecode is written (a non-empty PYTHONDONTWRITEBYTECODE, even "0", would stop it)
    assert seen and all("PYTHONDONTWRITEBYTECODE" not in env for env in seen)
    assert all(env["DUCKFLOW_DEMO_DELAY"] == "0" for env in seen)
    assert os.environ["PYTHONDONTWRITEBYTECODE"] == "1"  # the bench's own process is left alone


def test_a_run_over_three_times_the_floor_fails(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(startup, "_child", _fake_child(
        {"run": 0.35, "floor_cli": 0.10, "public": 0.07, "floor_import": 0.08}, []))
    assert startup.main(["--rounds", "3", "--json"]) == 1
    import json

    r = json.loads(capsys.readouterr().out)
    assert r["verdict"] == "FAIL: run_vs_floor" and r["run_demo"]["ratio_to_floor"]["median"] > 3
    assert set(r["run_demo"]["floor_seconds"]) >= {"min", "median", "max"}
    assert r["machine"]["cpus"] and "load_avg" in r["machine"]
