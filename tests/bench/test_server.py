"""`duckflow bench server`'s own logic: the locust-style arrival plan, the per-round ratio and the verdict."""

from __future__ import annotations

import statistics

from benchmarks._serverload import Level, Run, chunk_type, level_of, pct, schedule
from benchmarks.server import Options, verdict


def _level(n: int, p99: float, errors: int = 0, gaps: int = 0) -> Level:
    return Level(n, p99 / 2, p99, p99, p99, 5 * n, 100.0, 1.0, errors, gaps)


def test_the_paced_plan_spreads_first_messages_over_one_pace_and_thinks_pace_on_average() -> None:
    plan = schedule(500, pace=5.0, messages=3, seed=7)
    assert len(plan.first) == 500 and all(len(t) == 2 for t in plan.think)
    assert all(0.0 <= f < 5.0 for f in plan.first)  # the ramp: every session starts within one pace
    assert 2.0 < statistics.fmean(plan.first) < 3.0 and max(plan.first) - min(plan.first) > 4.5  # spread, not a burst
    thinks = [t for row in plan.think for t in row]
    assert all(2.5 <= t <= 7.5 for t in thinks) and 4.7 < statistics.fmean(thinks) < 5.3
    # the offered rate grows with the number of sessions (a load test's users, not one instant)
    assert 90 < plan.offered_per_s < 110
    assert 1.8 < schedule(10, 5.0, 3, seed=7).offered_per_s < 2.2
    assert schedule(500, 5.0, 3, seed=7) == plan and schedule(500, 5.0, 3, seed=8) != plan
    assert all(t == [] for t in schedule(4, 5.0, 1).think)


def test_the_bar_is_the_median_paced_ratio_and_the_burst_is_only_shown() -> None:
    paced = [[_level(10, 10.0), _level(500, 80.0)], [_level(10, 10.0), _level(500, 300.0)],
             [_level(10, 20.0), _level(500, 150.0)]]
    burst = [[_level(10, 30.0), _level(500, 900.0)]] * 3  # 30x: information, not a bar
    v = verdict(paced, burst)
    assert v["round_ratios"] == [8.0, 30.0, 7.5] and v["ttfc_p99_ratio"] == 8.0  # one bad round cannot fail it
    assert v["passed"] and v["clean"] and v["burst_ttfc_p99_ratio"] == 30.0
    bar = v["ratios"][0]
    assert bar["limit"] == 10.0 and bar["min"] == 7.5 and bar["max"] == 30.0 and bar["pass"]
    assert bar["ttfc_p99_ms_at_10"] == 10.0 and bar["ttfc_p99_ms_at_500"] == 150.0
    slow = [[_level(10, 10.0), _level(500, 120.0)]] * 3
    assert not verdict(slow, burst)["passed"] and verdict(slow, burst)["ttfc_p99_ratio"] == 12.0
    # an error or a gap anywhere fails the run, in the paced levels or in the burst shown beside
    assert not verdict([[_level(10, 10.0), _level(500, 50.0, errors=1)]], [])["passed"]
    assert not verdict(paced, [[_level(10, 30.0), _level(500, 90.0, gaps=2)]])["passed"]


def test_level_figures_and_the_replies_each_session_needs() -> None:
    runs = [Run(ttfc_ms=float(i), ttft_ms=float(i) + 1, chunks=10) for i in range(1, 101)] + [Run(error="boom")]
    lv = level_of(50, runs, wall=2.0)
    assert lv.ttfc_p50_ms == 51.0 and lv.ttfc_p99_ms == 99.0 and lv.errors == 1 and lv.error_samples == ["boom"]
    assert lv.messages == 101 and lv.messages_per_s == 50.5 and lv.chunks_per_s == 500.0
    assert pct([3.0, 1.0, 2.0], 0.99) == 3.0 and pct(list(map(float, range(1000))), 0.99) == 989.0
    assert Options(rounds=3, messages=3).replies == 13 and Options(rounds=2, messages=1, burst=False).replies == 3


def test_the_client_reads_a_chunks_own_type_without_parsing_it() -> None:
    assert chunk_type(b'{"time":"t","agent":"companion","type":"delta","data":{"text":"\\"type\\":\\"done\\""}}') == b"delta"
    assert chunk_type(b'{"time":"t","agent":"a","type":"done","data":{"type":"x"}}') == b"done"
    assert chunk_type(b'{"time":"t"}') == b""
