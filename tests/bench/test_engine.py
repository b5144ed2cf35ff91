"""`duckflow bench engine`: runs the turn on every framework present and reports the bars."""

from __future__ import annotations

import json

import pytest

from duckflow.bench import engine


def test_bench_engine_json_reports_figures_and_bars(capsys: pytest.CaptureFixture[str]) -> None:
    rc = engine.main(["--json", "--turns", "3", "--rounds", "1", "--sessions", "3", "--startup-runs", "1"])
    report = json.loads(capsys.readouterr().out)
    ours = report["frameworks"][0]
    assert ours["name"] == "duckflow" and ours["median_ms_per_turn"] > 0
    assert ours["bytes_per_live_session"] > 0
    names = [f["name"] for f in report["frameworks"]]
    assert any(n.startswith("pydantic-ai") for n in names) and any(n.startswith("openai-agents") for n in names)
    for f in report["frameworks"][1:]:
        assert (f["missing"] is None) == (f["median_ms_per_turn"] is not None)
        if f["missing"]:
            assert "pip install -e '.[bench]'" in f["missing"]
    results = {b["bar"]: b["result"] for b in report["bars"]}
    assert len(results) == 3 and set(results.values()) <= {"PASS", "FAIL", "not measured"}
    assert report["startup"]["baseline_ms"] > 0
    assert rc == (1 if "FAIL" in results.values() else 0)


def test_missing_frameworks_are_reported_not_measured(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_bench_deps(name: str, *args, **kwargs):  # type: ignore[no-untyped-def]
        if name.startswith(("pydantic_ai", "agents")):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_bench_deps)
    missing = [*engine.pydantic_ai_contenders(), engine.openai_agents_contender()]
    assert all(c.missing and "[bench]" in c.missing for c in missing)
