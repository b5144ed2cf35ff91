"""Model adapters (OpenAI-compatible, Anthropic, Ollama, scripted), retry/fallback, tokens.

Names are imported lazily (`from duckflow.llm import OpenAICompatModel` loads httpx only then);
the same names are imported under TYPE_CHECKING so type checkers see them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from duckflow._lazy import lazy_getattr

if TYPE_CHECKING:  # the lazy names below, for type checkers (`X as X` marks a re-export)
    from duckflow.llm.anthropic import AnthropicModel as AnthropicModel
    from duckflow.llm.errors import LLMAuthError as LLMAuthError
    from duckflow.llm.errors import LLMBadRequestError as LLMBadRequestError
    from duckflow.llm.errors import LLMConnectionError as LLMConnectionError
    from duckflow.llm.errors import LLMError as LLMError
    from duckflow.llm.errors import LLMRateLimitError as LLMRateLimitError
    from duckflow.llm.errors import LLMResponseError as LLMResponseError
    from duckflow.llm.errors import LLMServerError as LLMServerError
    from duckflow.llm.errors import LLMTimeoutError as LLMTimeoutError
    from duckflow.llm.names import normalize_model_name as normalize_model_name
    from duckflow.llm.ollama import OllamaModel as OllamaModel
    from duckflow.llm.openai_compat import OpenAICompatModel as OpenAICompatModel
    from duckflow.llm.registry import get_model as get_model
    from duckflow.llm.registry import get_model_chain as get_model_chain
    from duckflow.llm.retry import AllModelsFailedError as AllModelsFailedError
    from duckflow.llm.retry import CircuitBreaker as CircuitBreaker
    from duckflow.llm.retry import FallbackModel as FallbackModel
    from duckflow.llm.retry import RetryPolicy as RetryPolicy
    from duckflow.llm.scripted import ScriptedModel as ScriptedModel
    from duckflow.llm.scripted import ScriptExhaustedError as ScriptExhaustedError
    from duckflow.llm.scripted import fail as fail
    from duckflow.llm.scripted import reply as reply
    from duckflow.llm.scripted import tool_call as tool_call
    from duckflow.llm.scripted import tool_calls as tool_calls
    from duckflow.llm.types import Message as Message
    from duckflow.llm.types import Model as Model
    from duckflow.llm.types import ModelSettings as ModelSettings
    from duckflow.llm.types import ToolSpec as ToolSpec
    from duckflow.llm.types import Usage as Usage

_M = "duckflow.llm."
_EXPORTS = {
    "ScriptedModel": _M + "scripted", "reply": _M + "scripted", "tool_call": _M + "scripted",
    "tool_calls": _M + "scripted", "fail": _M + "scripted", "ScriptExhaustedError": _M + "scripted",
    "OpenAICompatModel": _M + "openai_compat", "AnthropicModel": _M + "anthropic", "OllamaModel": _M + "ollama",
    "FallbackModel": _M + "retry", "RetryPolicy": _M + "retry", "CircuitBreaker": _M + "retry",
    "AllModelsFailedError": _M + "retry",
    "get_model": _M + "registry", "get_model_chain": _M + "registry",
    "normalize_model_name": _M + "names",
    "Message": _M + "types", "Model": _M + "types", "ModelSettings": _M + "types", "ToolSpec": _M + "types",
    "Usage": _M + "types",
    "LLMError": _M + "errors", "LLMTimeoutError": _M + "errors", "LLMRateLimitError": _M + "errors",
    "LLMServerError": _M + "errors", "LLMAuthError": _M + "errors", "LLMConnectionError": _M + "errors",
    "LLMBadRequestError": _M + "errors", "LLMResponseError": _M + "errors",
}

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_getattr(globals(), _EXPORTS)
