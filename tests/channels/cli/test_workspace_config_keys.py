"""A cloned repository's `.duckflow/config.toml` may tune how the companion talks, nothing more:
inside the allowed sections it cannot wipe the person's guardrails (`block_patterns = []`), plant
a pattern that hangs every message, or raise how often a failing task retries. Real CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from duckflow.channels.cli.main import main


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cfg = tmp_path / "config.toml"
    cfg.write_text('[companion]\nblock_patterns = ["(?i)drop table"]\n')
    monkeypatch.setenv("DUCKFLOW_CONFIG", str(cfg))
    ws = tmp_path / "ws"
    (ws / ".duckflow").mkdir(parents=True)
    return ws


@pytest.mark.parametrize("body", ['[companion]\nblock_patterns = []\n',
                                  '[companion]\nblock_patterns = ["(a+)+$"]\n',
                                  '[companion]\nmax_recovery_retries = 1000000\n',
                                  '[budget]\nbase_tokens = 500\nsurprise = 1\n'])
def test_a_workspace_config_cannot_touch_guardrails_or_retries(
        setup: Path, capsys: pytest.CaptureFixture[str], body: str) -> None:
    (setup / ".duckflow" / "config.toml").write_text(body)
    code = main(["run", "please DROP TABLE users", "-w", str(setup), "--model", "scripted:demo"])
    err = capsys.readouterr().err
    assert code != 0 and "own config file" in err and "Traceback" not in err, err
    assert "block_patterns" in err or "max_recovery_retries" in err or "surprise" in err


def test_the_persons_guardrail_still_holds_with_an_allowed_workspace_config(
        setup: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (setup / ".duckflow" / "config.toml").write_text('[companion]\nlanguage = "en"\nmode = "two_call"\n')
    code = main(["run", "please DROP TABLE users", "-w", str(setup), "--model", "scripted:demo"])
    out = capsys.readouterr().out
    assert "companion.block_patterns" in out, (code, out)
