"""Fixtures for the gate tests: a gate on a temporary database, on the shared settable clock; the
scripted hostile model and the two modes (bubblewrap, plain) of the end-to-end `duckflow run` suites."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from duckflow.gate import Gate, GatePolicy
from duckflow.llm.scripted import ScriptedModel
from duckflow.workspace.sandbox import bwrap_usable
from tests.helpers import FakeClock


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "gate.db"


@pytest.fixture
def gate(db_path: Path, clock: FakeClock) -> Iterator[Gate]:
    g = Gate(db_path, GatePolicy(), clock=clock, requested_by="session:test")
    yield g
    g.close()


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """`model["script"] = [...]`: what every `--model scripted:…` of the test answers."""
    holder: dict[str, list[Any]] = {}

    def load(name: str, config: Any) -> ScriptedModel:
        return ScriptedModel(holder["script"], name="evil", supports_tools=True)

    monkeypatch.setattr("duckflow.companion.models.load_model", load)
    return holder


@pytest.fixture(params=["bwrap", "none"])
def mode(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each end-to-end case with bubblewrap and in plain mode (`[workspace] sandbox = "none"`)."""
    if request.param == "bwrap" and not bwrap_usable():
        pytest.skip("bubblewrap cannot run here")
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[workspace]\nsandbox = "{request.param}"\n')
    monkeypatch.setenv("DUCKFLOW_CONFIG", str(cfg))
    return str(request.param)
