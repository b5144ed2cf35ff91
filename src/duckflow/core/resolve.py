"""How an Agent turns a model name into a Model: an injected resolver, never the user's config.

`Agent(model="ollama:qwen2.5")` asks its `model_resolver`. The default resolves names with the
llm registry (retries, fallbacks, circuit breaker) and the built-in `ModelsConfig()` defaults,
so the same code behaves the same on every machine; an application that wants the user's
settings passes `registry_resolver(load_config().models)` (the CLI does).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from duckflow.llm.types import Model

if TYPE_CHECKING:
    from duckflow.config import ModelsConfig

OnEvent = Callable[[str, dict[str, Any]], None]


class ModelResolver(Protocol):
    """Turns a model name into a Model; `on_event` receives retry/fallback events for the trace."""

    def __call__(self, name: str, *, on_event: OnEvent | None = None) -> Model: ...


def registry_resolver(models: ModelsConfig | None = None) -> ModelResolver:
    """A resolver using `llm.registry.get_model_chain` with `models` (default: `ModelsConfig()`)."""

    def resolve(name: str, *, on_event: OnEvent | None = None) -> Model:
        from duckflow.config import ModelsConfig
        from duckflow.llm.registry import get_model_chain

        return get_model_chain(name, models if models is not None else ModelsConfig(), on_event=on_event)

    return resolve
