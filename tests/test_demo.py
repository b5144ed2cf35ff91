"""`make run`'s companion part: a fresh playground, the scripted model, a finished task."""

from __future__ import annotations

from pathlib import Path

import pytest

from duckflow import demo


def test_make_run_companion_demo_in_a_fresh_playground(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert demo.companion_demo(tmp_path) == 0
    out = capsys.readouterr().out
    assert "SCRIPTED model" in out and "Hello from Duckflow!" in out and "--- hello.py ---" in out
    hello = tmp_path / "playground" / "hello.py"
    assert hello.exists()
    (tmp_path / "playground" / "stale.txt").write_text("old run", encoding="utf-8")
    assert demo.companion_demo(tmp_path) == 0  # ours (marker): emptied and reused
    assert not (tmp_path / "playground" / "stale.txt").exists()


def test_a_foreign_playground_folder_is_never_emptied(tmp_path: Path) -> None:
    mine = tmp_path / "playground"
    mine.mkdir()
    (mine / "notes.txt").write_text("not Duckflow's", encoding="utf-8")
    assert demo.companion_demo(tmp_path) == 0
    assert (mine / "notes.txt").exists() and (tmp_path / "playground-2" / "hello.py").exists()


@pytest.mark.parametrize("codec", ["native", "symops", "dml"])
def test_the_demo_scenario_under_each_codec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str], codec: str) -> None:
    """The same task end to end through native tool calls, Sym-Ops text and DML text."""
    import json

    from duckflow.channels.cli.main import main as cli
    from duckflow.companion.demo_model import GREETING
    from duckflow.companion.models import DEMO_TASK

    monkeypatch.setenv("DUCKFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DUCKFLOW_DEMO_DELAY", "0")
    monkeypatch.setenv("DUCKFLOW_CODEC", codec)
    ws = tmp_path / "ws"
    ws.mkdir()
    assert cli(["run", DEMO_TASK, "-w", str(ws), "--model", "scripted:demo", "--auto-approve-workspace", "--json"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["codec"] == codec and out["ok"] and out["step"] == "DONE"
    assert (ws / "hello.py").read_text(encoding="utf-8") == GREETING
