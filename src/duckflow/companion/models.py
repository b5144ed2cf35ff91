"""Which model the companion talks to, and the built-in scripted demo (`--model scripted:demo`).

Order: `--model` → config (the Chat role's model: `routing.llm.chat_model`, `models.roles.chat`,
`models.roles.default`; `config.resolve_role`) → environment
(OPENAI_BASE_URL alone selects that server, asking its `/v1/models` which model it serves when
it is on this machine; OPENAI_API_KEY, ANTHROPIC_API_KEY, OLLAMA_HOST) → the bundled local model
when llama-cpp-python is installed → otherwise a clear error listing the ways to get one.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from typing import Any

from duckflow.errors import DuckflowError
from duckflow.llm.types import Model

ENV_DEFAULTS = (
    ("OPENAI_API_KEY", "openai:gpt-4o-mini"),
    ("ANTHROPIC_API_KEY", "anthropic:claude-3-5-haiku-latest"),
    ("OLLAMA_HOST", "ollama:qwen2.5-coder:7b"),
)

DEMO_TASK = "Create hello.py that prints a friendly greeting, then check it."


class NoModelError(DuckflowError):
    """No model is configured, reachable or installed."""


def _local_model_installed() -> bool:
    """The bundled offline model: the `[local]` extra and a provider module for it."""
    try:
        return (importlib.util.find_spec("llama_cpp") is not None
                and importlib.util.find_spec("duckflow.llm.local") is not None)
    except (ImportError, ValueError):
        return False


def choose_model_name(explicit: str | None, config: Any, environ: dict[str, str] | None = None) -> str:
    env = os.environ if environ is None else environ
    if explicit:
        return explicit
    if getattr(config, "routing", None) is not None:  # the conversation model: the Chat role's
        from duckflow.config import resolve_role

        chosen = resolve_role("chat", config)
        if chosen:
            return chosen
    roles = getattr(getattr(config, "models", None), "roles", None)
    for name in (getattr(roles, "chat", None), getattr(roles, "default", None)):
        if name:
            return str(name)
    base = env.get("OPENAI_BASE_URL")
    if base:
        served = served_model(base, env.get("OPENAI_API_KEY"))
        if served:
            return f"openai:{served}"
    for var, name in ENV_DEFAULTS:
        if env.get(var):
            return name
    if _local_model_installed():
        return "local:default"
    raise NoModelError(
        "no model is available for the companion",
        hint="pass --model (local:default runs the bundled offline model, ollama:NAME, "
        "openai:NAME); or set OPENAI_BASE_URL to a local OpenAI-compatible server "
        "(http://127.0.0.1:PORT/v1), OPENAI_API_KEY / ANTHROPIC_API_KEY, or OLLAMA_HOST; "
        "`make run` installs the offline model (`pip install 'duckflow-agent[local]'` then "
        "`duckflow models install`). To try without any model: --model scripted:demo",
    )


def served_model(base_url: str, key: str | None = None) -> str | None:
    """The first model id a server on this machine lists at `{base_url}/models`; None for a
    remote server (no question is sent there) or when it does not answer."""
    from duckflow.llm.provider import is_local_url

    if not is_local_url(base_url):
        return None
    import httpx

    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        resp = httpx.get(base_url.rstrip("/") + "/models", headers=headers, timeout=5.0)
        data = resp.json().get("data") or []
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    ids = [str(m.get("id")) for m in data if isinstance(m, dict) and m.get("id")]
    return ids[0] if ids else None


def load_model(name: str, config: Any) -> Model:
    """A Model for `name`: `scripted:demo` built in, everything else through llm.registry."""
    if name in ("scripted:demo", "demo"):
        return demo_model()
    try:
        registry = importlib.import_module("duckflow.llm.registry")
    except ImportError as exc:
        raise NoModelError(
            f"cannot load model '{name}': the provider registry is not available in this build",
            hint="use --model scripted:demo",
        ) from exc
    # retries, fallbacks (models.fallbacks) and the circuit breaker come with the chain
    model: Model = registry.get_model_chain(name, config)
    return model


def _decision(step: str, pattern: str, next_step: str, rationale: str, reply: str,
              delta: dict[str, Any] | None = None) -> str:
    """A Main decision as JSON text (the bench's and tests' scripts use it)."""
    from duckflow.companion.demo_model import decision_json

    return decision_json(step, pattern, next_step, rationale, reply, delta)


def demo_model() -> Model:
    """`scripted:demo`: answers from the prompt's state (companion/demo_model.py), never runs out."""
    from duckflow.companion.demo_model import DemoModel

    return DemoModel()
