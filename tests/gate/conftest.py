"""Fixtures for the gate tests: a settable clock and a gate on a temporary database."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from duckflow.gate import Gate, GatePolicy


class FakeClock:
    """Epoch seconds that only move when a test says so."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, *, minutes: float = 0.0, seconds: float = 0.0) -> None:
        self.now += minutes * 60 + seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "gate.db"


@pytest.fixture
def gate(db_path: Path, clock: FakeClock) -> Iterator[Gate]:
    g = Gate(db_path, GatePolicy(), clock=clock, requested_by="session:test")
    yield g
    g.close()
