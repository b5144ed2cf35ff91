"""Ollama readiness before each message to an Ollama role (seed 003 latest update, §10).

`OllamaReadiness.ensure(model)` makes one request (`GET /api/ps`, the loaded models), cached
for `ttl_s` (1.5 s) per server. The server down, or a model that was loaded before and is not any
more (keep_alive -1 should keep it), → the model's restart command runs (`OllamaModel.restart`,
which waits until healthy). The call itself still retries only when it fails (OllamaModel).
Models of other providers pass through untouched.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any


class OllamaReadiness:
    def __init__(self, restart_command: str | None = None, *, ttl_s: float = 1.5,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.restart_command = restart_command
        self.ttl_s = ttl_s
        self.clock = clock
        self._checked: dict[str, tuple[float, set[str] | None]] = {}
        self._seen_loaded: set[tuple[str, str]] = set()
        self.requests = 0
        self.restarts = 0

    async def _loaded(self, base_url: str, provider: str) -> set[str] | None:
        """Names of the loaded models, or None when the server does not answer (cached)."""
        from duckflow.llm.errors import LLMError
        from duckflow.llm.http import get_json

        now = self.clock()
        hit = self._checked.get(base_url)
        if hit is not None and now - hit[0] < self.ttl_s:
            return hit[1]
        self.requests += 1
        try:
            data = await get_json(f"{base_url}/api/ps", provider=provider, timeout_s=2.0)
            names: set[str] | None = {str(m.get("name") or m.get("model")) for m in (data or {}).get("models", [])}
        except LLMError:
            names = None
        self._checked[base_url] = (now, names)
        return names

    async def ensure(self, model: Any) -> str:
        """'ok', 'restarted' or 'skipped' (not an Ollama model)."""
        inner = getattr(model, "models", None)  # a FallbackModel: its first (primary) model
        if inner:
            model = inner[0]
        # an Ollama model exists only once its module is loaded: asking never imports it (and
        # httpx with it, ~0.1 s) for the scripted, local or cloud models of a run
        ollama = sys.modules.get("duckflow.llm.ollama")
        if ollama is None or not isinstance(model, ollama.OllamaModel):
            return "skipped"
        loaded = await self._loaded(model.base_url, model.name)
        key = (model.base_url, model.model)
        wanted = {model.model, model.model if ":" in model.model else f"{model.model}:latest"}
        if loaded is not None and wanted & loaded:
            self._seen_loaded.add(key)
            return "ok"
        if loaded is not None and key not in self._seen_loaded:
            return "ok"  # never loaded yet: the first call loads it
        if not (model.restart_command or self.restart_command):
            return "ok"  # nothing to run; the call reports the problem with its own hint
        if model.restart_command is None:
            model.restart_command = self.restart_command
        await model.restart()
        self.restarts += 1
        self._checked.pop(model.base_url, None)
        return "restarted"
