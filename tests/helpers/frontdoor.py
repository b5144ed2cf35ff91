"""`duckflow run` as a person types it, with a ScriptedModel behind it: the front door for scenario tests."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from duckflow.channels.cli.main import main as cli
from duckflow.llm.scripted import ScriptedModel


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> Any:
    """`scripted(replies)`: the model every `--model scripted:…` loads, returned to read its requests."""

    def make(replies: list[Any]) -> ScriptedModel:
        model = ScriptedModel(replies, name="t")
        monkeypatch.setattr("duckflow.companion.models.load_model", lambda name, config: model)
        return model

    return make


@dataclass
class FrontDoor:
    root: Path
    capsys: pytest.CaptureFixture[str]

    def run(self, task: str, *, as_json: bool = True, mode: str = "single-call",
            extra: tuple[str, ...] = ()) -> tuple[int, dict[str, Any], str]:
        """`duckflow run TASK --auto-approve-workspace`: (exit code, the --json object or {}, all it printed)."""
        self.capsys.readouterr()
        codec = ("--codec", "symops") if mode == "single-call" else ()
        rc = cli(["run", task, "-w", str(self.root), "--model", "scripted:t", "--mode", mode, *codec,
                  "--auto-approve-workspace", *(["--json"] if as_json else []), *extra])
        cap = self.capsys.readouterr()
        lines = cap.out.strip().splitlines()
        return rc, json.loads(lines[-1]) if as_json and lines else {}, cap.out + cap.err


@pytest.fixture
def front_door(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> FrontDoor:
    root = tmp_path / "ws"
    root.mkdir()
    return FrontDoor(root, capsys)
