"""`duckflow run`, `chat` (piped), `status`, `sessions` with the built-in scripted demo model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from duckflow.channels.cli.main import main as cli


def test_run_demo_with_workspace_auto_approve_succeeds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = cli(["run", "Create hello.py", "-w", str(tmp_path), "--model", "scripted:demo",
              "--auto-approve-workspace", "--json"])
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert rc == 0 and out["ok"] and out["step"] == "DONE" and out["status"] == "SUCCESS"
    assert "Hello from Duckflow" in (tmp_path / "hello.py").read_text()


def test_under_auto_approve_a_change_shows_its_diff_not_a_card(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    rc = cli(["run", "Create hello.py", "-w", str(tmp_path), "--model", "scripted:demo", "--auto-approve-workspace"])
    out = capsys.readouterr().out
    assert rc == 0 and (tmp_path / "hello.py").exists()
    assert "╭─" not in out and "Why:" not in out and "Approved automatically" not in out  # nobody was asked
    action = out.index("● Create hello.py (+6 −0)")
    assert out.index('+    print("Hello from Duckflow!")') > action  # the change, under its line


def test_under_auto_approve_a_card_nobody_answered_is_shown_whole() -> None:
    import io

    from rich.console import Console

    from duckflow.channels.cli.render import Renderer
    from duckflow.core.chunks import ApprovalChunk, ApprovalData

    console = Console(file=io.StringIO(), width=100, force_terminal=False)
    r = Renderer(console)
    r.hold_cards = True
    request = {"summary": "Run make clean", "rationale": "tidy up", "risk": "high", "diff_preview": "$ make clean"}
    r(ApprovalChunk(agent="companion", data=ApprovalData(phase="request", job_id="ab12cd34ef", request=request,
                                                         call={"name": "execute_shell", "arguments": {"command": "make clean"}})))
    assert console.file.getvalue() == ""  # held: it may be answered automatically
    r.flush()  # the run stopped at it: a person must decide
    shown = console.file.getvalue()
    assert "╭─" in shown and "Why:" in shown and "tidy up" in shown and "job ab12cd34" in shown


def test_run_without_approval_stops_with_exit_4_and_status_shows_the_job(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = cli(["run", "Create hello.py", "-w", str(tmp_path), "--model", "scripted:demo", "--json"])
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert rc == 4 and out["ending"] == "approval" and out["pending"]["job_id"]
    assert not (tmp_path / "hello.py").exists()
    assert cli(["status", "-w", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    job = out["pending"]["job_id"]
    assert "Waiting for you to approve: Create hello.py — 6 lines" in text and f"approvals grant {job[:8]}" in text
    assert "AWAITING_APPROVAL" not in text and job not in text  # no status names, the short id only
    assert cli(["sessions", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["sessions"]
    assert rows[0]["session_id"] == out["session_id"] and rows[0]["pending"] is True


def test_no_model_gives_the_three_ways(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from duckflow.companion import models

    monkeypatch.setattr(models, "_local_model_installed", lambda: False)  # as on a machine without [local]
    rc = cli(["run", "hi", "-w", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 1 and "OPENAI_API_KEY" in err and "OLLAMA_HOST" in err and "[local]" in err


def test_status_without_sessions_says_how_to_start(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["status", "-w", str(tmp_path)]) == 1
    assert "duckflow chat" in capsys.readouterr().err


def test_chat_piped_runs_the_demo_with_an_inline_approval(tmp_path: Path) -> None:
    env = dict(os.environ)
    lines = "Create hello.py\n/status\nyes\n/status\n/quit\n"
    proc = subprocess.run(
        [sys.executable, "-m", "duckflow", "chat", "-w", str(tmp_path), "--model", "scripted:demo"],
        input=lines, capture_output=True, text=True, timeout=120, env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Create hello.py — 6 lines" in proc.stdout and "Done." in proc.stdout
    assert "PLANNING" not in proc.stdout and "step DONE" not in proc.stdout
    assert (tmp_path / "hello.py").exists()


def test_run_pauses_the_collector_only_while_it_sets_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    import gc

    from duckflow.companion import factory

    seen: list[bool] = []
    real = factory.open_session

    def spy(*a, **k):  # type: ignore[no-untyped-def]
        seen.append(gc.isenabled())
        return real(*a, **k)

    monkeypatch.setattr(factory, "open_session", spy)
    try:
        assert cli(["run", "Create hello.py", "-w", str(tmp_path), "--model", "scripted:demo",
                    "--auto-approve-workspace", "--json"]) == 0
        assert seen == [False] and gc.isenabled()  # paused while setting up, collecting again after
        assert cli(["run", "-w", str(tmp_path / "none")]) == 1  # an error during the set-up
        assert gc.isenabled()
    finally:
        gc.enable()
        capsys.readouterr()
