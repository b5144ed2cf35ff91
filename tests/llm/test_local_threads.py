"""llama.cpp's OpenMP threads sleep when idle: the wait policy is in the environment before llama_cpp loads.

The GNU OpenMP runtime reads OMP_WAIT_POLICY once, when llama.cpp's library is loaded; its
spin-waiting default made the 1.5B model decode 0.45-0.7 tokens/s beside one CPU-bound process
(issue 33). `duckflow bench decode` measures the effect; here, that the setting is in place
when the import happens, that a person's own setting wins, and that a server child gets it."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
import types
from collections.abc import Sequence
from typing import Any

import pytest

from duckflow.llm import local


class _FakeLlamaCpp(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Stands in for llama_cpp and records the environment at the moment it is imported."""

    def __init__(self) -> None:
        self.seen: dict[str, str | None] = {}

    def find_spec(self, name: str, path: Sequence[str] | None, target: Any = None) -> Any:
        return importlib.machinery.ModuleSpec(name, self) if name == "llama_cpp" else None

    def create_module(self, spec: Any) -> types.ModuleType:
        return types.ModuleType(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        self.seen["OMP_WAIT_POLICY"] = os.environ.get("OMP_WAIT_POLICY")


@pytest.fixture
def fake_llama(monkeypatch: pytest.MonkeyPatch) -> _FakeLlamaCpp:
    fake = _FakeLlamaCpp()
    monkeypatch.delitem(sys.modules, "llama_cpp", raising=False)
    monkeypatch.setattr(sys, "meta_path", [fake, *sys.meta_path])
    return fake


def test_the_wait_policy_is_passive_when_llama_cpp_loads(fake_llama: _FakeLlamaCpp,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    assert "llama_cpp" not in sys.modules
    local._import_llama()
    assert fake_llama.seen == {"OMP_WAIT_POLICY": "PASSIVE"}


def test_a_persons_own_wait_policy_wins(fake_llama: _FakeLlamaCpp, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    local._import_llama()
    assert fake_llama.seen == {"OMP_WAIT_POLICY": "ACTIVE"}


def test_a_server_child_gets_it_in_its_environment() -> None:
    env = local.quiet_openmp({"PATH": "/bin"})
    assert env == {"PATH": "/bin", "OMP_WAIT_POLICY": "PASSIVE"}
    assert local.quiet_openmp({"OMP_WAIT_POLICY": "active"})["OMP_WAIT_POLICY"] == "active"


@pytest.mark.parametrize(("cores", "generate", "read"), [(1, 1, 1), (2, 1, 2), (4, 3, 4), (16, 8, 8)])
def test_one_core_is_left_for_the_rest_of_the_machine_while_generating(
        monkeypatch: pytest.MonkeyPatch, cores: int, generate: int, read: int) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    assert (local.default_threads(), local.batch_threads()) == (generate, read)


def test_the_prompt_is_read_with_every_core_and_generated_with_the_chosen_threads(
        fake_llama: _FakeLlamaCpp, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[dict[str, Any]] = []

    class Llama:
        def __init__(self, **kwargs: Any) -> None:
            made.append(kwargs)

        def _init_sampler(self, **kwargs: Any) -> None:
            return None

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(local, "_LOADED", {})
    monkeypatch.setattr(local, "_import_llama", lambda: types.SimpleNamespace(Llama=Llama))
    local.load_llama("/models/m.gguf", 2048, local.default_threads())
    assert made[0]["n_threads"] == 1 and made[0]["n_threads_batch"] == 2
