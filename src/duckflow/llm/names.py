"""Model names: every model is known as `provider:model` (e.g. `openai:gpt-4o`, `ollama:llama3.1:8b`).

`normalize_model_name` accepts the short names people type and says which provider they mean:
`gpt-4o` → `openai:gpt-4o`, `claude-3-5-sonnet` → `anthropic:claude-3-5-sonnet`,
`llama3.1:8b` → `ollama:llama3.1:8b` (a `name:tag` is Ollama's naming), `ollama/chat-v1:latest`
(seed 003's form) → `ollama:chat-v1:latest`. An explicit `provider:model` is kept.
"""

from __future__ import annotations

import re

from duckflow.errors import DuckflowError

PROVIDERS = ("openai", "anthropic", "ollama", "openrouter", "vllm", "lmstudio", "llamacpp", "local", "scripted")

_OPENAI = re.compile(r"^(gpt|chatgpt|o\d|text-embedding|davinci|babbage)([-_.]|$)", re.I)
_ANTHROPIC = re.compile(r"^claude([-_.]|$)", re.I)
_LOCAL_FAMILIES = re.compile(
    r"^(llama|codellama|qwen|mistral|mixtral|gemma|phi|deepseek|starcoder|granite|smollm|tinyllama|"
    r"nomic|command-r|yi|falcon|vicuna|orca|olmo|hermes|dolphin)", re.I)


class UnknownModelError(DuckflowError):
    """A model name whose provider cannot be told."""


def normalize_model_name(name: str) -> str:
    """`provider:model` for a model name; raises UnknownModelError when the provider is unclear."""
    raw = name.strip()
    if not raw:
        raise UnknownModelError("empty model name", hint="write it as provider:model, e.g. ollama:llama3.1:8b")
    head, sep, rest = raw.partition(":")
    if sep and head.lower() in PROVIDERS and rest:
        provider = head.lower()
        return f"{provider}:{_tidy(provider, rest)}"
    slash_head, slash, slash_rest = raw.partition("/")
    if slash and slash_head.lower() in ("ollama", "openrouter") and slash_rest:
        return f"{slash_head.lower()}:{slash_rest}"
    if _OPENAI.match(raw):
        return f"openai:{_tidy('openai', raw)}"
    if _ANTHROPIC.match(raw):
        return f"anthropic:{_tidy('anthropic', raw)}"
    if sep and rest and "/" not in raw:
        return f"ollama:{raw}"  # name:tag is Ollama's naming
    if _LOCAL_FAMILIES.match(raw):
        return f"ollama:{raw}"
    raise UnknownModelError(
        f"cannot tell which provider serves model {raw!r}",
        hint="write it as provider:model — " + ", ".join(f"{p}:" for p in PROVIDERS if p != "scripted"),
    )


def split_model_name(name: str) -> tuple[str, str]:
    """(provider, model) of a name, normalised first."""
    provider, _, model = normalize_model_name(name).partition(":")
    return provider, model


def _tidy(provider: str, model: str) -> str:
    """Anthropic ids are lower-case with hyphens (`claude_3` → `claude-3`); every other name is
    sent as given (an OpenAI-compatible server may serve `…/SmolLM2-135M-Instruct.Q4_1.gguf`)."""
    if provider == "anthropic":
        return model.strip().lower().replace("_", "-")
    return model.strip()
