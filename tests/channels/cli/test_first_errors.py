"""The errors a person meets first: one line and the next step, before anything starts, printed once."""

from __future__ import annotations

from pathlib import Path

import pytest

from duckflow.channels.cli.main import main as cli


def _err(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    rc = cli(list(argv))
    out = capsys.readouterr()
    assert "Traceback" not in out.err + out.out
    return rc, out.err


def test_an_unknown_provider_lists_the_valid_forms_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, err = _err(capsys, "run", "hi", "-w", str(tmp_path), "--model", "foo:bar")
    assert rc == 1 and "unknown model 'foo:bar'" in err
    for form in ("local:default", "ollama:NAME", "openai:NAME", "anthropic:NAME", ".gguf", "duckflow models list"):
        assert form in err
    assert err.count("foo:bar") == 1 and len(err.strip().splitlines()) == 2  # said once: the error, the next step
    rc, err = _err(capsys, "chat", "-w", str(tmp_path), "--model", "scripted:nosuch")
    assert rc == 1 and "there is no scripted model 'nosuch'" in err and "scripted:demo" in err
    assert "construct it in code" not in err and err.count("nosuch") == 1


def test_a_misspelled_config_key_gets_a_did_you_mean(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text("[modles]\nx = 1\n")
    monkeypatch.setenv("DUCKFLOW_CONFIG", str(cfg))
    rc, err = _err(capsys, "run", "hi", "-w", str(tmp_path), "--model", "scripted:demo")
    assert rc == 1 and "unknown setting 'modles' (did you mean 'models'?)" in err and "Extra inputs" not in err
    cfg.write_text("[companion]\ncodek = 'symops'\n")
    rc, err = _err(capsys, "run", "hi", "-w", str(tmp_path), "--model", "scripted:demo")
    assert "unknown setting 'companion.codek' (did you mean 'codec'?)" in err


def test_a_file_as_the_workspace_is_said_to_be_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "hostname"
    f.write_text("x")
    rc, err = _err(capsys, "run", "hi", "-w", str(f), "--model", "scripted:demo")
    assert rc == 1 and f"{f} is a file, not a folder" in err and f"-w {tmp_path}" in err and "create it" not in err


def test_help_starts_with_examples_and_keeps_developer_tools_apart(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.index("examples:") < out.index("commands:") < out.index("developer tools:")
    person = out[out.index("commands:"):out.index("developer tools:")]
    tools = out[out.index("developer tools:"):]
    assert "  chat" in person and "  run" in person and "  undo" in person
    for name in ("bench", "protocol", "sanitize", "route", "events"):
        assert f"  {name}" in tools and f"  {name} " not in person
    assert "seed" not in out
