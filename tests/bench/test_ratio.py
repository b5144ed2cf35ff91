"""The shared method of every bench: interleaved rounds, paired ratios, one bar shape, exit codes."""

from __future__ import annotations

import gc

import pytest
from benchmarks import _ratio
from benchmarks._ratio import exit_code, interleave, paired_ratio, ratio_bar


def test_paired_ratio_is_taken_round_by_round_and_its_median_is_the_figure() -> None:
    # round 3 is a burst of load on the first case only: the median does not move with it
    r = paired_ratio([1.0, 2.0, 30.0, 1.0, 2.0], [10.0, 20.0, 10.0, 10.0, 20.0])
    assert r == {"median": 0.1, "min": 0.1, "max": 3.0}


def test_ratio_bar_holds_the_median_against_the_limit() -> None:
    ok = ratio_bar("x / y", {"median": 0.1, "min": 0.05, "max": 0.3}, 0.1, ours_ms=1.0)
    assert ok == {"bar": "x / y", "value": 0.1, "limit": 0.1, "pass": True, "min": 0.05, "max": 0.3,
                  "ours_ms": 1.0}
    assert ratio_bar("x / y", {"median": 0.101}, 0.1)["pass"] is False


def test_exit_code_fails_only_on_a_failed_bar() -> None:
    assert exit_code([True, True]) == 0
    assert exit_code([True, None]) == 0  # not measured is not a failure (--require-peers decides)
    assert exit_code([True, False, None]) == 1


def test_interleave_shuffles_each_round_and_collects_before_each_case(monkeypatch: pytest.MonkeyPatch) -> None:
    order: list[str] = []
    collections = []
    monkeypatch.setattr(_ratio.gc, "collect", lambda *a: collections.append(1) or 0)

    def case(name: str):  # type: ignore[no-untyped-def]
        return lambda: order.append(name) or float(len(order))

    out = interleave({"a": case("a"), "b": case("b"), "c": case("c")}, rounds=8, warmup=1, collect=True)
    assert [len(v) for v in out.values()] == [8, 8, 8]
    measured = order[3:]  # after the warm-up round
    rounds = [tuple(measured[i:i + 3]) for i in range(0, 24, 3)]
    assert all(sorted(r) == ["a", "b", "c"] for r in rounds)
    assert len(set(rounds)) > 1  # the order changes between rounds
    assert len(collections) == 24
    assert gc.isenabled()
