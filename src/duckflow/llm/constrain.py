"""Bounded, low-temperature, grammar-constrained settings for calls to local models.

`constrained(model, max_tokens=..., grammar=..., json_schema=...)` gives the ModelSettings of one
call: every local model (in-process llama.cpp, llama.cpp's server, Ollama, any OpenAI-compatible
server on this machine) gets `max_tokens` sized to the call and a low temperature; the grammar
or schema goes where that backend reads it:

| backend | GBNF grammar | JSON schema |
|---|---|---|
| `local:` (llama-cpp-python in process) | `LlamaGrammar.from_string` | `LlamaGrammar.from_json_schema` |
| OpenAI-compatible on loopback (llama.cpp server) | body `grammar` | body `response_format: {type: json_object, schema}` |
| Ollama | (not supported: bounds only) | body `format: schema` |

Cloud models get the settings unchanged (None): their providers do not take GBNF, and their
replies are bounded by the provider. A cloud model never receives these keys at all: the HTTP
provider drops them (`cloud_settings`) before masking-and-sending, so the grammar of a local
primary (it holds file lines, paths and commands) cannot reach a cloud fallback unmasked. `models.constrained_decoding = false` switches grammars
and schemas off (bounds stay).

A schema's `maxLength`/`maxItems` above `MAX_GRAMMAR_REPEAT` is left out of what a local backend
gets (`grammar_schema`): llama.cpp writes `x{0,N}` as N nested optional rules and parses them
recursively, so `max_length=20_000` overflowed the stack and killed the process (SIGSEGV) before
the first token. The caller still validates the reply against the full schema, and `max_tokens`
bounds the length anyway.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from duckflow.llm.types import ModelSettings

LOCAL_TEMPERATURE = 0.1
MAX_GRAMMAR_REPEAT = 1000  # nesting llama.cpp's recursive grammar parser handles (the decision uses 400)
_REPEAT_BOUNDS = ("maxLength", "maxItems", "minLength", "minItems")


def grammar_schema(schema: Any) -> Any:
    """`schema` without repetition bounds above MAX_GRAMMAR_REPEAT (a copy; the original is kept)."""
    if isinstance(schema, dict):
        return {k: grammar_schema(v) for k, v in schema.items()
                if not (k in _REPEAT_BOUNDS and isinstance(v, int) and v > MAX_GRAMMAR_REPEAT)}
    if isinstance(schema, list):
        return [grammar_schema(v) for v in schema]
    return schema


def backend_of(model: Any) -> str:
    """`local`, `llamacpp-http` (OpenAI-compatible on this machine), `ollama`, or `cloud`."""
    inner = model
    while hasattr(inner, "models") and getattr(inner, "models", None):
        inner = inner.models[0]  # FallbackModel: the first (primary) model decides
    provider = getattr(inner, "provider", "")
    if provider == "local":
        return "local"
    if not getattr(inner, "is_local", False):
        return "cloud"
    if provider == "ollama":
        return "ollama"
    if provider == "scripted" or type(inner).__name__ == "ScriptedModel":
        return "scripted"
    return "llamacpp-http"


def constrained(
    model: Any,
    *,
    max_tokens: int,
    grammar: str | None = None,
    json_schema: dict[str, Any] | None = None,
    temperature: float = LOCAL_TEMPERATURE,
    enabled: bool = True,
    seed: int | None = 0,
) -> ModelSettings | None:
    """The settings for one call to `model` (None for cloud and scripted models)."""
    backend = backend_of(model)
    if backend in ("cloud", "scripted"):
        return None
    extra: dict[str, Any] = {}
    if seed is not None:
        extra["seed"] = seed
    if json_schema:
        json_schema = grammar_schema(json_schema)
    if enabled and backend == "local":
        if grammar:
            extra["grammar"] = grammar
        elif json_schema:
            extra["json_schema"] = json_schema
    elif enabled and backend == "llamacpp-http":
        if grammar:
            extra["grammar"] = grammar
        elif json_schema:
            extra["response_format"] = {"type": "json_object", "schema": json_schema}
    elif enabled and backend == "ollama" and json_schema:
        extra["format"] = json_schema
    if backend == "ollama":
        extra.pop("seed", None)  # Ollama takes the seed in options; the bound matters more
    return ModelSettings(temperature=temperature, max_tokens=max_tokens, extra=extra)


# What `constrained` adds for local backends only. A grammar is built from the task and the
# workspace (paths, commands, the lines of a file an edit may change), so it carries file text
# the sanitizer never saw; a schema may carry a task's enums.
def _local_only(key: str, value: Any, provider: str) -> bool:
    if key in ("grammar", "json_schema"):
        return True
    if key == "response_format":  # llama.cpp's shape; OpenAI's own json_schema format is kept
        return isinstance(value, dict) and "schema" in value
    return key == "format" and provider != "ollama"


def cloud_settings(settings: ModelSettings | None, provider: str = "") -> ModelSettings | None:
    """`settings` as a cloud provider may get them: without the local-only constraint keys.

    Settings are made once per call for the first model of a FallbackModel (`backend_of`); a
    cloud model later in the chain must not receive the local primary's grammar."""
    if settings is None or not any(_local_only(k, v, provider) for k, v in settings.extra.items()):
        return settings
    extra = {k: v for k, v in settings.extra.items() if not _local_only(k, v, provider)}
    return replace(settings, extra=extra)


def local_defaults(settings: ModelSettings | None, *, max_tokens: int = 1024,
                   temperature: float = 0.2) -> ModelSettings:
    """Settings of a call to a local server that named no bound: bounded, low temperature."""
    s = settings or ModelSettings()
    if s.max_tokens is not None and s.temperature is not None:
        return s
    return ModelSettings(temperature=temperature if s.temperature is None else s.temperature,
                         max_tokens=max_tokens if s.max_tokens is None else s.max_tokens,
                         timeout_s=s.timeout_s, extra=dict(s.extra))
