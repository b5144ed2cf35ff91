"""Test-wide isolation: no test reads or writes the real user's Duckflow state or config."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest_plugins = ("tests.helpers.fixtures",)


@pytest.fixture(autouse=True)
def _isolated_duckflow_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("duckflow_home")
    monkeypatch.setenv("DUCKFLOW_HOME", str(home))
    monkeypatch.setenv("DUCKFLOW_CONFIG", os.devnull)  # no config file (docs/cli.md)
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "OLLAMA_HOST", "DUCKFLOW_MODEL",
                "TRACE_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT", "DUCKFLOW_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    yield home
