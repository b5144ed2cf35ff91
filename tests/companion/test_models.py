"""Which model the companion uses: flag → config → environment → local → a clear error."""

from __future__ import annotations

import pytest

from duckflow.companion.models import NoModelError, choose_model_name, demo_model, load_model
from duckflow.config import Config, ModelsConfig


def test_flag_then_config_then_environment() -> None:
    cfg = Config(models=ModelsConfig(chat="ollama:qwen2.5:3b"))
    assert choose_model_name("openai:gpt-4o", cfg, {}) == "openai:gpt-4o"
    assert choose_model_name(None, cfg, {"OPENAI_API_KEY": "x"}) == "ollama:qwen2.5:3b"
    assert choose_model_name(None, Config(), {"ANTHROPIC_API_KEY": "x"}).startswith("anthropic:")
    assert choose_model_name(None, Config(), {"OLLAMA_HOST": "127.0.0.1"}).startswith("ollama:")


def test_nothing_available_lists_the_three_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(NoModelError) as exc:
        choose_model_name(None, Config(), {})
    text = str(exc.value)
    assert "OPENAI_API_KEY" in text and "OLLAMA_HOST" in text and "duckflow-agent[local]" in text
    assert "scripted:demo" in text and "--model" in text and "OPENAI_BASE_URL" in text


def test_named_models_come_from_the_registry_and_demo_is_built_in() -> None:
    assert load_model("scripted:demo", Config()).name == "scripted:demo"
    assert demo_model().supports_tools
    m = load_model("ollama:qwen2.5:3b", Config())
    assert "ollama" in m.name
