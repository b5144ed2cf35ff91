"""Fixtures for the gate tests: a gate on a temporary database, on the shared settable clock."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from duckflow.gate import Gate, GatePolicy
from tests.helpers import FakeClock


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "gate.db"


@pytest.fixture
def gate(db_path: Path, clock: FakeClock) -> Iterator[Gate]:
    g = Gate(db_path, GatePolicy(), clock=clock, requested_by="session:test")
    yield g
    g.close()
