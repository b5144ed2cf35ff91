"""`duckflow bench engine`: every framework present runs the turn; bars are ratios; peers can be required."""

from __future__ import annotations

import builtins
import json

import pytest

from duckflow.bench import engine


def test_bench_engine_json_reports_figures_and_ratio_bars(capsys: pytest.CaptureFixture[str]) -> None:
    rc = engine.main(["--json", "--turns", "3", "--rounds", "2", "--anonymous-runs", "200",
                      "--concurrency", "5"])
    report = json.loads(capsys.readouterr().out)
    ours = report["frameworks"][0]
    assert ours["name"] == "duckflow"
    for mode in ("run_ms", "stream_ms"):
        s = ours[mode]
        assert 0 < s["min"] <= s["median"] <= s["p90"] <= s["max"]
    assert ours["concurrency"]["5"]["failures"] == 0
    assert report["retained"]["runs"] == 200 and report["retained"]["retained_bytes"] < 1_000_000
    assert report["machine"]["cpus"] >= 1
    for f in report["frameworks"][1:]:
        assert (f["missing"] is None) == (f["run_ms"] is not None)
    results = {b["bar"]: b["result"] for b in report["bars"]}
    assert len(results) == 3 and set(results.values()) <= {"PASS", "FAIL", "not measured"}
    assert rc == (1 if "FAIL" in results.values() else 0)


def _without_peers(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_bench_deps(name: str, *args, **kwargs):  # type: ignore[no-untyped-def]
        if name.startswith(("pydantic_ai", "agents")):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_bench_deps)


async def test_missing_peers_are_reported_not_measured(monkeypatch: pytest.MonkeyPatch) -> None:
    _without_peers(monkeypatch)
    missing = [engine.pydantic_ai_contender(), await engine.openai_agents_contender()]
    assert all(c.missing and "[bench]" in c.missing for c in missing)


def test_require_peers_fails_when_they_are_missing(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    _without_peers(monkeypatch)
    args = ["--json", "--turns", "2", "--rounds", "1", "--anonymous-runs", "10"]
    assert engine.main(args + ["--require-peers"]) == 1
    out = capsys.readouterr()
    report = json.loads(out.out)
    assert all(b["result"] == "not measured" for b in report["bars"][:2])
    assert "peers missing" in out.err
