"""The fixed roles Chat / Worker / Coder1-3 resolved to models, with seed 003's local/cloud policy.

`Roles.agent(role, route=..., local_only=...)` returns a `core.Agent` for the role: every model
call of the orchestra goes through core's agent loop. Policy (§5, §7): a cloud model is used only
for routes in `routing.cloud_routes` (CODE routes by default) and never while local_only; cloud
calls are sanitized by the provider layer (`llm.provider.HTTPModel`). Coder3 gets its §10.1
limits (max_tokens, timeout, retry_max).
"""

from __future__ import annotations

from importlib import resources
from string import Template
from typing import Any

from duckflow.errors import DuckflowError

ROLE_OF_ROUTE = {"CHAT": "chat", "PLAN": "worker", "ANALYZE": "worker", "OPS": "worker", "RESEARCH": "worker",
                 "CODE1": "coder1", "CODE2": "coder2", "CODE3": "coder3"}
ROUTE_TASKS = {
    "PLAN": "plan the work: steps, specification, breaking it into tasks",
    "ANALYZE": "analyse: extract, structure and aggregate the data, and say what it shows",
    "OPS": "operations: a safe procedure, incident handling or a settings check, with commands to review",
    "RESEARCH": "research: what is known, with sources to check, and what is uncertain",
    "CHAT": "answer the person",
}
_ALIAS_KEY = {"chat": "chat_alias", "worker": "worker_alias", "coder1": "coder_alias", "coder2": "coder2_alias",
              "coder3": "coder3_alias"}


class RoleUnavailable(DuckflowError):
    """A role has no usable model (not configured, or refused by the local/cloud policy)."""


def error_text(error: Any) -> str:
    """One line for a run's error (a DuckflowError's message, else its text)."""
    return str(getattr(error, "message", None) or error)


def is_timeout(error: Any) -> bool:
    """Whether a run ended on a timeout (an LLMTimeoutError or TimeoutError anywhere in its causes)."""
    from duckflow.llm.errors import LLMTimeoutError

    seen = 0
    while error is not None and seen < 8:
        if isinstance(error, LLMTimeoutError | TimeoutError):
            return True
        error, seen = error.__cause__ or error.__context__, seen + 1
    return False


def prompt(name: str, **values: str) -> str:
    """A prompt template of orchestra/prompts/ with `$values` filled in."""
    text = resources.files("duckflow.orchestra").joinpath(f"prompts/{name}.md").read_text(encoding="utf-8")
    return Template(text).safe_substitute(values)


def role_for_route(route: str, default_coder: str = "CODE1") -> str:
    if route == "CODE":
        route = default_coder
    return ROLE_OF_ROUTE.get(route, "worker")


class Roles:
    """Models per role from the config, or given directly (`models={"worker": ScriptedModel(...)}`)."""

    def __init__(self, config: Any, *, models: dict[str, Any] | None = None, on_event: Any = None) -> None:
        self.config = config
        self.models: dict[str, Any] = dict(models or {})
        self.on_event = on_event
        self.health: Any = None  # an OllamaReadiness, set by the orchestrator
        self.used: list[str] = []  # the models given a call for the current message (the person is told)

    def alias(self, role: str) -> str:
        return str(getattr(self.config.routing.llm, _ALIAS_KEY[role]))

    def explicit(self, role: str) -> bool:
        """Whether the role has a model of its own (given, `routing.llm.<role>_model` or
        `models.roles.<role>`), not only the default every role falls back to."""
        if role in self.models:
            return True
        key = _ALIAS_KEY[role].replace("_alias", "_model")
        return bool(getattr(self.config.routing.llm, key, None)
                    or getattr(getattr(self.config.models, "roles", None), role, None)
                    or (role == "coder3" and self.config.coder3.model))

    def model(self, role: str) -> Any:
        if role in self.models:
            return self.models[role]
        from duckflow.config import resolve_role

        name = resolve_role(role, self.config)
        if name is None:
            raise RoleUnavailable(f"no model is configured for the {role} role",
                                  hint=f"set routing.llm.{_ALIAS_KEY[role].replace('_alias', '_model')} "
                                       "(or models.roles.default / DUCKFLOW_MODEL)")
        from duckflow.llm.registry import get_model

        model = get_model(name, self.config.models, on_event=self.on_event)
        self.models[role] = model
        return model

    def checked_model(self, role: str, *, route: str, local_only: bool) -> Any:
        """The role's model if the local/cloud policy allows it for this route."""
        model = self.model(role)
        if getattr(model, "is_local", True):
            return model
        if local_only:
            raise RoleUnavailable(f"the {role} model {model.name} is a cloud model and local-only mode is on",
                                  hint="send /cloud to allow cloud models, or configure a local model")
        if route not in self.config.routing.cloud_routes:
            raise RoleUnavailable(
                f"the {role} model {model.name} is a cloud model; cloud models are used only for "
                f"{', '.join(self.config.routing.cloud_routes)}",
                hint="configure a local model for this role, or add the route to routing.cloud_routes")
        return model

    def agent(self, role: str, *, route: str, local_only: bool, instructions: str) -> Any:
        """A core Agent for one call of `role` (single turn, no tools: roles propose, never execute)."""
        from duckflow.core.agent import Agent
        from duckflow.llm.types import ModelSettings

        model = self.checked_model(role, route=route, local_only=local_only)
        if model.name not in self.used:
            self.used.append(model.name)
        settings = None
        if role == "coder3":
            c3 = self.config.coder3
            settings = ModelSettings(max_tokens=c3.max_tokens, timeout_s=c3.timeout_sec)
        # no tools and the native codec: the reply text reaches the contract reader as the model wrote it
        return Agent(self.alias(role), instructions, model=model, settings=settings, max_turns=1, codec="native")

    async def ready(self, role: str) -> None:
        """Seed 003: before each message to an Ollama role, a cheap health check (restart if down)."""
        if self.health is not None:
            await self.health.ensure(self.models.get(role))

    def retries(self, role: str) -> int:
        return self.config.coder3.retry_max if role == "coder3" else 0
