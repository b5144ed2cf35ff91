"""Model names are normalised; get_model builds providers from names, env and config."""

from __future__ import annotations

import pytest

from duckflow.config import ModelsConfig
from duckflow.errors import ConfigError
from duckflow.llm import get_model
from duckflow.llm.anthropic import AnthropicModel
from duckflow.llm.names import UnknownModelError, normalize_model_name, split_model_name
from duckflow.llm.ollama import OllamaModel
from duckflow.llm.openai_compat import OpenAICompatModel
from duckflow.llm.registry import MissingCredentialsError, get_model_chain
from duckflow.llm.retry import FallbackModel
from duckflow.llm.scripted import reply
from duckflow.llm.types import Message, complete
from tests.helpers.fakeserver import FakeServer, Reply, openai_stream


@pytest.mark.parametrize(("given", "expected"), [
    ("gpt-4o", "openai:gpt-4o"), ("gpt_4o", "openai:gpt_4o"),
    ("openai:org/SmolLM2-135M-Instruct.Q4_1.gguf", "openai:org/SmolLM2-135M-Instruct.Q4_1.gguf"), ("o3-mini", "openai:o3-mini"),
    ("claude-3-5-sonnet", "anthropic:claude-3-5-sonnet"), ("claude_3_opus", "anthropic:claude-3-opus"),
    ("llama3.1:8b", "ollama:llama3.1:8b"), ("ollama:llama3.1:8b", "ollama:llama3.1:8b"),
    ("ollama/chat-v1:latest", "ollama:chat-v1:latest"), ("qwen2.5-coder", "ollama:qwen2.5-coder"),
    ("openrouter:anthropic/claude-3.5-sonnet", "openrouter:anthropic/claude-3.5-sonnet"),
    ("vllm:my-model", "vllm:my-model"), ("OpenAI:gpt-4o-mini", "openai:gpt-4o-mini"),
])
def test_normalize_model_name(given: str, expected: str) -> None:
    assert normalize_model_name(given) == expected


def test_unknown_names_say_how_to_write_them() -> None:
    with pytest.raises(UnknownModelError, match="mystery") as info:
        normalize_model_name("mystery")
    assert "provider:model" in (info.value.hint or "")
    assert split_model_name("gpt-4o") == ("openai", "gpt-4o")


def test_missing_openai_key_lists_the_ways_to_configure() -> None:
    with pytest.raises(MissingCredentialsError, match="OPENAI_API_KEY is not set") as info:
        get_model("gpt-4o", env={})
    hint = info.value.hint or ""
    assert "OPENAI_BASE_URL" in hint and "ollama:" in hint
    with pytest.raises(MissingCredentialsError, match="ANTHROPIC_API_KEY"):
        get_model("claude-3-5-sonnet", env={})


def test_providers_built_from_env_and_config() -> None:
    m = get_model("gpt-4o", env={"OPENAI_API_KEY": "sk-x"})
    assert isinstance(m, OpenAICompatModel) and m.api_key == "sk-x" and not m.is_local
    local = get_model("gpt-4o", env={"OPENAI_BASE_URL": "http://127.0.0.1:9999/v1"})
    assert isinstance(local, OpenAICompatModel) and local.is_local and local.api_key is None
    a = get_model("claude-3-5-sonnet", env={"ANTHROPIC_API_KEY": "ak"})
    assert isinstance(a, AnthropicModel) and a.name == "anthropic:claude-3-5-sonnet"
    cfg = ModelsConfig(ollama_restart_command="systemctl --user restart ollama", max_context=8192, chat="chat-v1:latest")
    o = get_model("chat", cfg, env={"OLLAMA_HOST": "127.0.0.1:11500"})
    assert isinstance(o, OllamaModel) and o.base_url == "http://127.0.0.1:11500"
    assert o.name == "ollama:chat-v1:latest" and o.max_context == 8192 and o.restart_command
    v = get_model("vllm:qwen", ModelsConfig(base_urls={"vllm": "http://127.0.0.1:8001/v1"}), env={})
    assert isinstance(v, OpenAICompatModel) and v.base_url == "http://127.0.0.1:8001/v1" and v.name == "vllm:qwen"


def test_whole_config_is_accepted() -> None:
    from duckflow.config import Config

    cfg = Config(models=ModelsConfig(default="ollama:qwen:7b"))
    assert get_model("default", cfg, env={}).name == "ollama:qwen:7b"
    with pytest.raises(TypeError):
        get_model("default", {"models": {}}, env={})


def test_unset_role_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="role 'worker'"):
        get_model("worker", ModelsConfig(), env={})


async def test_chain_from_config_falls_back(server: FakeServer) -> None:
    server.queue("/b/v1/chat/completions", Reply(chunks=openai_stream(["from b"])))
    cfg = ModelsConfig(base_urls={"vllm": f"{server.url}/a/v1", "lmstudio": f"{server.url}/b/v1"},
                       fallbacks=["lmstudio:b"], retries=0)
    chain = get_model_chain("vllm:a", cfg, env={})
    assert isinstance(chain, FallbackModel) and [m.name for m in chain.models] == ["vllm:a", "lmstudio:b"]
    assert (await complete(chain, [Message("user", "x")])).text == "from b"


def test_lazy_package_exports() -> None:
    import duckflow.llm as llm

    assert llm.reply is reply
    with pytest.raises(AttributeError):
        llm.nothing_here  # noqa: B018
