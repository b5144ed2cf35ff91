"""Shared test helpers: a settable clock; fake servers, workspaces and companion sessions live in the submodules."""

from __future__ import annotations


class FakeClock:
    """Epoch seconds that only move when a test says so (callable, like `time.time`)."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, *, minutes: float = 0.0, seconds: float = 0.0) -> None:
        self.now += minutes * 60 + seconds
