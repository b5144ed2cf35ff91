"""The package skeleton: fast import, CLI dispatch, config loading and errors."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from duckflow.channels.cli.main import main
from duckflow.config import load_config
from duckflow.errors import ConfigError


def test_import_pulls_in_nothing_heavy() -> None:
    code = (
        "import sys, duckflow; heavy = {'pydantic','httpx','tiktoken','rich','jinja2',"
        "'prompt_toolkit','detect_secrets'} & set(m.split('.')[0] for m in sys.modules); "
        "print(sorted(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_help_lists_commands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "protocol" in out and "bench" in out


def test_unknown_command_suggests(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["protocl"]) == 2
    assert "duckflow protocol" in capsys.readouterr().err


def test_broken_config_names_the_file(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    cfg = tmp_path / "config.toml"
    cfg.write_text("[models\n")
    monkeypatch.setenv("DUCKFLOW_CONFIG", str(cfg))
    with pytest.raises(ConfigError) as err:
        load_config()
    assert str(cfg) in str(err.value)


def test_config_rejects_unknown_key(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    cfg = tmp_path / "config.toml"
    cfg.write_text("[budget]\nbase_tokenz = 3\n")
    monkeypatch.setenv("DUCKFLOW_CONFIG", str(cfg))
    with pytest.raises(ConfigError) as err:
        load_config()
    assert "budget.base_tokenz" in str(err.value)


def test_config_env_overrides(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("DUCKFLOW_CONFIG", os.devnull)
    cfg = load_config(env={"OLLAMA_HOST": "http://127.0.0.1:9"})
    assert cfg.models.ollama.host == "http://127.0.0.1:9"
    assert cfg.budget.base_tokens == 500


def test_workspace_config_cannot_loosen_security(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("DUCKFLOW_CONFIG", os.devnull)
    ws = tmp_path / "ws"
    (ws / ".duckflow").mkdir(parents=True)
    (ws / ".duckflow" / "config.toml").write_text('[workspace]\ndangerous_extensions = []\n')
    with pytest.raises(ConfigError) as err:
        load_config(ws)
    assert "workspace" in str(err.value) and "own config" in str(err.value)
    (ws / ".duckflow" / "config.toml").write_text('[companion]\nlanguage = "ja"\n')
    assert load_config(ws).companion.language == "ja"


def test_old_flat_keys_are_read_into_the_nested_tables_with_a_note(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    cfg_file = tmp_path / "config.toml"
    cfg_file.write_text('[models]\nchat = "ollama:qwen2.5:3b"\nollama_host = "http://127.0.0.1:7"\n'
                        'anthropic_base_url = "http://127.0.0.1:8"\n[models.roles]\ndefault = "ollama:x"\n'
                        '[gate]\nauto_approve_paths = ["src/"]\n')
    monkeypatch.setenv("DUCKFLOW_CONFIG", str(cfg_file))
    cfg = load_config(env={})
    assert (cfg.models.roles.chat, cfg.models.roles.default) == ("ollama:qwen2.5:3b", "ollama:x")
    assert cfg.models.ollama.host == "http://127.0.0.1:7" and cfg.models.base_urls["anthropic"] == "http://127.0.0.1:8"
    assert cfg.gate.auto_approve.paths == ["src/"] and cfg.models.for_role("worker") == "ollama:x"
    assert "models.chat is deprecated: write it as models.roles.chat" in cfg.deprecations
    assert "gate.auto_approve_paths is deprecated: write it as gate.auto_approve.paths" in cfg.deprecations
    fresh = load_config(env={"DUCKFLOW_MODEL": "ollama:y", "OLLAMA_HOST": "h:1"})
    assert fresh.models.roles.default == "ollama:y" and fresh.models.ollama.host == "h:1"
    from duckflow.channels.cli.config_cmd import effective

    rows = effective(None, env={})
    assert rows["models.roles.chat"]["source"] == "legacy key models.chat"
    assert "models.chat is deprecated: write it as models.roles.chat" in rows["_deprecations"]["value"]
