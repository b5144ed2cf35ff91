"""Model adapters (OpenAI-compatible, Anthropic, Ollama, scripted), retry/fallback, tokens.

Names are imported lazily (`from duckflow.llm import OpenAICompatModel` loads httpx only then).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "ScriptedModel": "scripted", "reply": "scripted", "tool_call": "scripted", "tool_calls": "scripted",
    "fail": "scripted", "ScriptExhaustedError": "scripted",
    "OpenAICompatModel": "openai_compat", "AnthropicModel": "anthropic", "OllamaModel": "ollama",
    "FallbackModel": "retry", "RetryPolicy": "retry", "CircuitBreaker": "retry", "AllModelsFailedError": "retry",
    "get_model": "registry", "get_model_chain": "registry",
    "normalize_model_name": "names",
    "LLMError": "errors", "LLMTimeoutError": "errors", "LLMRateLimitError": "errors",
    "LLMServerError": "errors", "LLMAuthError": "errors", "LLMConnectionError": "errors",
    "LLMBadRequestError": "errors", "LLMResponseError": "errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'duckflow.llm' has no attribute {name!r}")
    return getattr(importlib.import_module(f"duckflow.llm.{module}"), name)
