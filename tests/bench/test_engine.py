"""`duckflow bench engine`: every framework present runs the turn; bars are ratios; peers can be required."""

from __future__ import annotations

import builtins
import json

import pytest
from benchmarks import engine


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
    assert report["ratios"] == report["bars"][:2]  # the ratio bars, in the shape `bench repeat` reads
    for bar in report["ratios"]:
        if bar["value"] is not None:
            assert bar["min"] <= bar["value"] <= bar["max"] and bar["fastest_peer_ms"] > 0


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


def _contender(name: str, run: list[float], stream: list[float]) -> engine.Contender:
    c = engine.Contender(name)
    c.rounds = {"run": run, "stream": stream}
    c.times = {"run": list(run), "stream": list(stream)}
    return c


def test_turn_ratio_is_the_median_of_per_round_ratios_against_the_fastest_peer_of_each_round() -> None:
    ours = _contender("duckflow", [0.3, 0.3, 0.9, 0.3], [0.3] * 4)
    a = _contender("a", [4.0, 3.0, 3.0, 5.0], [4.0] * 4)
    b = _contender("b", [3.0, 6.0, 3.0, 3.0], [2.0] * 4)
    bar = engine.turn_ratio("run", ours, [a, b])
    # per round: 0.3/3, 0.3/3, 0.9/3, 0.3/3 -> median 0.1; the slow third round does not decide it
    assert (bar["value"], bar["min"], bar["max"]) == (0.1, 0.1, 0.3)
    assert bar["pass"] is True and bar["result"] == "PASS" and bar["limit"] == engine.TURN_RATIO
    assert bar["fastest_peer"] == "b" and bar["duckflow_ms"] == 300.0
    worse = engine.turn_ratio("stream", ours, [a, b])  # 0.3 / 2.0 = 0.15 > 0.10
    assert worse["value"] == 0.15 and worse["pass"] is False and worse["result"] == "FAIL"


def test_turn_ratio_without_peers_is_not_measured() -> None:
    bar = engine.turn_ratio("run", _contender("duckflow", [0.3], [0.3]), [])
    assert bar["result"] == "not measured" and bar["pass"] is None and bar["value"] is None


def test_bench_engine_reports_memory_per_live_session_through_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    # issue 3's second figure; the ratio rework had dropped it from the report
    from duckflow.channels.cli.main import main

    main(["bench", "engine", "--json", "--turns", "2", "--rounds", "1", "--anonymous-runs", "20",
          "--live-sessions", "50"])
    live = json.loads(capsys.readouterr().out)["live_sessions"]
    assert live["sessions"] == 50 and 0 < live["bytes_per_session"] < 100_000
