"""Orchestra fixtures: a real workspace, gate, SQLite state and JSONL event log in tmp_path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from duckflow.config import load_config
from duckflow.gate import Gate
from duckflow.orchestra.events import EventLog
from duckflow.orchestra.orchestrator import Orchestrator
from duckflow.orchestra.state import OrchestraState


def worker_json(result: str = "done", *, needs_next_loop: bool = False, risk: str = "low", confidence: float = 0.8,
                fit: bool | None = None, suggested_route: str | None = None, questions: list[str] | None = None,
                next_actions: list[str] | None = None) -> str:
    data: dict[str, Any] = {"result": result, "needs_next_loop": needs_next_loop, "why": "because",
                            "next_actions": next_actions or [], "questions_for_user": questions or [],
                            "confidence": confidence, "risk": risk}
    if fit is not None:
        data["fit"] = fit
    if suggested_route is not None:
        data["suggested_route"] = suggested_route
    return json.dumps(data)


@pytest.fixture
def make_orch(tmp_path: Path) -> Any:
    made: list[Orchestrator] = []
    (tmp_path / "ws").mkdir()

    def make(models: dict[str, Any], *, channel: str = "cli", companion: bool = True, session: str = "s1",
             config: Any = None) -> Orchestrator:
        orch = Orchestrator(config or load_config(env={}), workspace=tmp_path / "ws", session_id=session,
                            channel=channel, models=models, gate=Gate(tmp_path / "gate.db"),
                            state=OrchestraState(tmp_path / "orchestra.db"), events=EventLog(tmp_path / "events.jsonl"),
                            companion=companion)
        made.append(orch)
        return orch

    yield make
    for o in made:
        o.close()
        o.gate.close()


def events_of(orch: Orchestrator, type: str | None = None) -> list[dict[str, Any]]:
    return list(orch.events.read(session=orch.session_id, type=type))
