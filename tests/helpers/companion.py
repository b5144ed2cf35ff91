"""Shared companion fixtures: a tmp workspace, real tools, gate and store, and scripted Main replies."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from duckflow.companion.factory import OpenedSession, open_session
from duckflow.companion.store import SessionStore
from duckflow.gate import Gate
from duckflow.llm.scripted import ScriptedModel, reply


def decision(step: str, pattern: str = "base_main", next_step: str = "continue",
             rationale: str = "because", say: str = "", **delta: Any) -> Any:
    """A scripted Main reply with the §7.1 JSON."""
    return reply(json.dumps({
        "rationale": rationale, "goal_consistency": "yes", "constraint_check": "yes",
        "next_step": next_step, "step": step, "prompt_pattern": pattern,
        "state_delta": delta, "reply": say or rationale,
    }))


class Env:
    def __init__(self, root: Path, home: Path) -> None:
        self.root = root
        self.home = home
        self.opened: list[OpenedSession] = []

    def open(self, script: list[Any] | ScriptedModel, **kw: Any) -> OpenedSession:
        model = script if isinstance(script, ScriptedModel) else ScriptedModel(script, name="test")
        store = SessionStore(self.home / "sessions.db")
        gate = Gate(self.home / "gate.db")
        kw.setdefault("codec", "native")  # the scripts use native tool calls unless a test says otherwise
        o = open_session(self.root, model=model, store=store, gate=gate, **kw)
        self.opened.append(o)
        return o

    def close(self) -> None:
        for o in self.opened:
            o.close()


@pytest.fixture
def env(tmp_path: Path) -> Any:
    root = tmp_path / "ws"
    root.mkdir()
    e = Env(root, tmp_path / "home")
    yield e
    e.close()


@pytest.fixture
def steps_of() -> Callable[[OpenedSession], list[str]]:
    def f(o: OpenedSession) -> list[str]:
        return [f"{r.from_step.value}>{r.to_step.value}" for r in o.session.owner.controller.history if r.allowed]

    return f
