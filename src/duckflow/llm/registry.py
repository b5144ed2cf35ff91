"""Build a Model from its name and the configuration: `get_model("gpt-4o")`, `get_model("chat")`.

Names go through `normalize_model_name`; a role name (`chat`, `worker`, `coder1`..`coder3`,
`default`) is looked up in `ModelsConfig` first. Keys and URLs come from the environment
(OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_API_KEY, OPENROUTER_API_KEY, OLLAMA_HOST) or
from `ModelsConfig`. `get_model_chain` wraps the model and `models.fallbacks` in a
FallbackModel with the retry policy and circuit breaker.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from duckflow.errors import ConfigError
from duckflow.llm.names import split_model_name
from duckflow.llm.types import Model

if TYPE_CHECKING:
    from duckflow.config import ModelsConfig
    from duckflow.llm.retry import FallbackModel, OnEvent

ROLES = ("default", "chat", "worker", "coder1", "coder2", "coder3")

# OpenAI-compatible servers: default base URL and the variable holding the key (None: no key)
COMPAT: dict[str, tuple[str, str | None]] = {
    "openai": ("https://api.openai.com/v1", "OPENAI_API_KEY"),
    "openrouter": ("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    "vllm": ("http://127.0.0.1:8000/v1", None),
    "lmstudio": ("http://127.0.0.1:1234/v1", None),
    "llamacpp": ("http://127.0.0.1:8080/v1", None),
}


class MissingCredentialsError(ConfigError):
    """A cloud model was asked for but its API key is not configured."""


def _host_url(host: str) -> str:
    """OLLAMA_HOST may be `host:port` or `0.0.0.0` without a scheme."""
    host = host.strip().rstrip("/")
    if "://" not in host:
        host = f"http://{host}"
    if host.count(":") == 1:
        host += ":11434"
    return host.replace("://0.0.0.0", "://127.0.0.1")


def resolve_name(name: str, config: ModelsConfig) -> str:
    """A role name replaced by the model configured for it."""
    if name in ROLES:
        chosen = config.for_role(name)
        if not chosen:
            raise ConfigError(
                f"no model is configured for role {name!r}",
                hint=f"set models.roles.{name} (or models.roles.default / DUCKFLOW_MODEL) to e.g. ollama:llama3.1:8b",
            )
        return str(chosen)
    return name


def _section(config: Any) -> ModelsConfig:
    """The ModelsConfig, given it or a whole Config (which has `.models`)."""
    from duckflow.config import ModelsConfig

    if config is None:
        return ModelsConfig()
    if isinstance(config, ModelsConfig):
        return config
    models = getattr(config, "models", None)
    if isinstance(models, ModelsConfig):
        return models
    raise TypeError(f"expected ModelsConfig or Config, got {type(config).__name__}")


def get_model(name: str, config: ModelsConfig | Any = None, *, env: Mapping[str, str] | None = None,
              on_event: OnEvent | None = None) -> Model:
    """The provider model for `name` (no retries; see `get_model_chain`).

    `config` is the `ModelsConfig` (a whole `Config` is accepted too); None means defaults.
    """
    cfg = _section(config)
    environ = os.environ if env is None else env
    provider, model = split_model_name(resolve_name(name, cfg))
    timeout = cfg.request_timeout_s
    deadline = getattr(cfg, "request_deadline_s", 600.0)

    if provider == "ollama":
        from duckflow.llm.ollama import OllamaModel

        host = environ.get("OLLAMA_HOST") or cfg.ollama.host
        return OllamaModel(model, base_url=_host_url(host), num_ctx=cfg.ollama.num_ctx,
                           restart_command=cfg.ollama.restart_command, restart_wait_s=cfg.ollama.restart_wait_s,
                           min_context=cfg.min_context, max_context=cfg.max_context, timeout_s=timeout,
                           on_event=on_event, deadline_s=deadline)
    if provider == "local":
        from duckflow.llm.local import LocalModel

        return LocalModel.from_name(model, local_path=cfg.local_path, n_ctx=cfg.local_context,
                                    n_threads=cfg.local_threads or None)
    if provider == "anthropic":
        from duckflow.llm.anthropic import AnthropicModel
        from duckflow.llm.provider import is_local_url

        base = environ.get("ANTHROPIC_BASE_URL") or cfg.base_urls.get("anthropic") or AnthropicModel.default_base_url
        key = environ.get("ANTHROPIC_API_KEY")
        if not key and not is_local_url(base):
            raise _missing("anthropic", model, "ANTHROPIC_API_KEY")
        return AnthropicModel(model, base_url=base, api_key=key, timeout_s=timeout,
                              deadline_s=deadline)
    if provider in COMPAT:
        from duckflow.llm.openai_compat import OpenAICompatModel
        from duckflow.llm.provider import is_local_url

        default_url, key_var = COMPAT[provider]
        base = (environ.get("OPENAI_BASE_URL") if provider == "openai" else None) or cfg.base_urls.get(provider) \
            or default_url
        key = environ.get(key_var) if key_var else None
        if key_var and not key and not is_local_url(base):
            raise _missing(provider, model, key_var)
        return OpenAICompatModel(model, provider=provider, base_url=base, api_key=key, timeout_s=timeout,
                                 deadline_s=deadline)
    if provider == "scripted":
        raise ConfigError(f"there is no scripted model '{model}'",
                          hint="the scripted models are: scripted:demo")
    raise ConfigError(f"{provider}:{model} cannot be built from a name",
                      hint="construct it in code (e.g. ScriptedModel([...])) and pass the object")


def get_model_chain(name: str, config: ModelsConfig | Any = None, *, on_event: OnEvent | None = None,
                    env: Mapping[str, str] | None = None, **kw: Any) -> FallbackModel:
    """`name` and then `models.fallbacks`, with retries and a circuit breaker."""
    from duckflow.llm.retry import CircuitBreaker, FallbackModel, RetryPolicy

    cfg = _section(config)
    names = [name] + [f for f in cfg.fallbacks if f != name]
    models = [get_model(n, cfg, env=env, on_event=on_event) for n in names]
    return FallbackModel(models, policy=RetryPolicy(retries=cfg.retries),
                         breaker=CircuitBreaker(cfg.circuit_threshold, cfg.circuit_cooldown_s),
                         on_event=on_event, **kw)


def _missing(provider: str, model: str, var: str) -> MissingCredentialsError:
    return MissingCredentialsError(
        f"{var} is not set, so {provider}:{model} cannot be used",
        hint=f"set {var}; or point models.base_urls / OPENAI_BASE_URL at a local OpenAI-compatible "
             "server; or run Ollama and use an ollama:<model> name (e.g. ollama:llama3.1:8b)",
    )
