"""[routing], [loop], [coder3]: seed 003 §10 defaults, legacy keys, clear errors, `duckflow config show`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from duckflow.channels.cli.main import main
from duckflow.config import load_config
from duckflow.errors import ConfigError
from duckflow.orchestra.settings import role_model_name


def write_config(home: Path, text: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = home / "config.toml"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setenv("DUCKFLOW_CONFIG", str(path))
    return path


def test_seed_003_defaults() -> None:
    c = load_config(env={})
    assert (c.routing.classifier.min_confidence, c.routing.classifier.min_confidence_for_code) == (0.6, 0.8)
    assert (c.loop.max_loops, c.loop.max_millis) == (3, 90_000)
    assert c.loop.allow_auto_reroute_once and c.loop.allow_chat_propose_reroute_once
    assert (c.coder3.provider, c.coder3.model, c.coder3.max_tokens, c.coder3.retry_max, c.coder3.timeout_sec) == (
        "anthropic", "claude-sonnet-4.5", 16_000, 2, 60.0)
    assert c.models.ollama.num_ctx == 8192 and c.gate.require_approval


def test_role_models_and_legacy_code_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_config(tmp_path, """
[models]
default = "ollama:llama3.1:8b"
[routing.llm]
chat_alias = "Mio"
chat_provider = "ollama"
chat_model = "ollama/chat-v1:latest"
code_provider = "openai"
code_model = "gpt-4o"
""", monkeypatch)
    c = load_config(env={})
    assert c.routing.llm.chat_alias == "Mio"
    assert role_model_name("chat", c.routing, c.models) == "ollama:chat-v1:latest"
    assert role_model_name("coder1", c.routing, c.models) == "openai:gpt-4o"
    assert role_model_name("worker", c.routing, c.models) == "ollama:llama3.1:8b"
    assert role_model_name("coder3", c.routing, c.models, c.coder3) == "anthropic:claude-sonnet-4.5"
    assert c.routing.llm.deprecations == ["routing.llm.code_provider is deprecated: use routing.llm.coder_provider",
                                          "routing.llm.code_model is deprecated: use routing.llm.coder_model"]


@pytest.mark.parametrize(("text", "where"), [
    ("[loop]\nmax_loops = 0\n", "loop.max_loops"),
    ("[routing]\nfallback_route = \"DANCE\"\n", "routing.fallback_route"),
    ("[routing.classifier]\nmin_confidence = 1.5\n", "routing.classifier.min_confidence"),
    ("[routing.llm]\nchat_nickname = \"x\"\n", "routing.llm.chat_nickname"),
])
def test_bad_values_are_clear_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, where: str) -> None:
    write_config(tmp_path, text, monkeypatch)
    with pytest.raises(ConfigError, match=where.replace(".", r"\.")):
        load_config(env={})


def test_config_show_names_every_value_and_its_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(tmp_path, "[loop]\nmax_loops = 5\n[routing.llm]\ncode_model = \"gpt-4o\"\n", monkeypatch)
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")
    assert main(["config", "show", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows["loop.max_loops"] == {"value": 5, "source": f"file {path}"}
    assert rows["loop.max_millis"] == {"value": 90000, "source": "default"}
    assert rows["models.ollama.host"] == {"value": "127.0.0.1:9", "source": "env OLLAMA_HOST"}
    assert rows["routing.llm.coder_model"]["source"] == "legacy key routing.llm.code_model"
    assert rows["coder3.max_tokens"]["value"] == 16000
    seed = rows["_seed_003_names"]["value"]
    assert seed["approval.required_by_default"] == {"value": True, "source": "gate.require_approval, default"}
    assert seed["loop.max_loops"] == {"value": 5, "source": f"file {path}"} and seed["keep_alive"]["value"] == -1
    assert main(["config", "show", "--section", "loop"]) == 0
    text = capsys.readouterr().out
    assert "loop.max_loops" in text and "models." not in text and "deprecated" in text
    assert main(["config", "show", "--section", "nope"]) == 1


def test_config_show_names_the_workspace_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = tmp_path / "ws"
    (ws / ".duckflow").mkdir(parents=True)
    (ws / ".duckflow" / "config.toml").write_text('[companion]\nlanguage = "ja"\n', encoding="utf-8")
    assert main(["config", "show", "--json", "--workspace", str(ws)]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows["companion.language"]["value"] == "ja" and rows["companion.language"]["source"].startswith("file ")
    assert rows["companion.codec"]["source"] == "default"
