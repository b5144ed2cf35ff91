"""Timing that holds on a shared, loaded machine: interleaved rounds, paired ratios, summaries.

Every bar of every `duckflow bench` is a ratio against a baseline measured in the same run.
`interleave` runs each case once per round, in a shuffled order, so slow phases of the machine
hit all cases alike; `paired_ratio` takes the ratio round by round (each pair measured seconds
apart) and reports the median, which a burst of load in one round cannot move.
"""

from __future__ import annotations

import gc
import os
import random
import statistics
import time
from collections.abc import Callable, Mapping
from typing import Any

Case = Callable[[], float]  # runs once, returns the seconds (or bytes) it measured


def interleave(cases: Mapping[str, Case], rounds: int, *, warmup: int = 1, seed: int = 0,
               collect: bool = False) -> dict[str, list[float]]:
    """`rounds` measurements of every case, shuffled within each round (after `warmup` rounds).

    With `collect`, a full garbage collection runs before every case (outside its clock), so no
    case pays for the garbage the one before it left.
    """
    rng = random.Random(seed)
    names = list(cases)
    for _ in range(warmup):
        for name in names:
            cases[name]()
    out: dict[str, list[float]] = {n: [] for n in names}
    for _ in range(rounds):
        rng.shuffle(names)
        for name in names:
            if collect:
                gc.collect()
            out[name].append(cases[name]())
    return out


def summary(values: list[float], scale: float = 1.0, digits: int = 4) -> dict[str, float]:
    """min / median / mean / p90 / max, multiplied by `scale` (e.g. 1000 for ms)."""
    s = sorted(values)
    p90 = s[min(len(s) - 1, int(round(0.9 * (len(s) - 1))))]
    return {k: round(v * scale, digits) for k, v in (
        ("min", s[0]), ("median", statistics.median(s)), ("mean", statistics.fmean(s)), ("p90", p90), ("max", s[-1]))}


def paired_ratio(a: list[float], b: list[float]) -> dict[str, float]:
    """Round-by-round a/b: median (the figure a bar uses), min and max."""
    ratios = sorted(x / y for x, y in zip(a, b, strict=True) if y > 0)
    return {"median": round(statistics.median(ratios), 3), "min": round(ratios[0], 3), "max": round(ratios[-1], 3)}


def machine() -> dict[str, Any]:
    """What the machine was doing: load averages and cores (printed beside every figure)."""
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = []
    return {"load_avg": load, "cpus": os.cpu_count()}


def ratio_bar(name: str, ratios: Mapping[str, float], limit: float, **absolute: Any) -> dict[str, Any]:
    """One ratio bar as every bench reports it (`ratios` in its JSON, read by `bench repeat`).

    `ratios` is a `paired_ratio` result: its median is held against `limit` (value <= limit),
    min and max are shown beside it, and so are the `absolute` figures it was made of.
    """
    value = ratios["median"]
    return {"bar": name, "value": value, "limit": limit, "pass": value <= limit,
            "min": ratios.get("min", value), "max": ratios.get("max", value), **absolute}


def exit_code(passes: list[bool | None]) -> int:
    """0 when no bar failed (a bar not measured is None, not a failure), else 1."""
    return 1 if any(p is False for p in passes) else 0


def verdict(bars: Mapping[str, bool]) -> str:
    return "PASS" if all(bars.values()) else "FAIL: " + ", ".join(k for k, ok in bars.items() if not ok)


def best_of(fn: Callable[[], Any], repeat: int) -> float:
    """The fastest of `repeat` runs, in seconds (best-of-N cuts scheduler noise).

    As `timeit` does, the garbage collector is off while a run is timed.
    """
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            t0 = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t0)
        finally:
            gc.enable()
    return best
