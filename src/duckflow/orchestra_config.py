"""Configuration sections of the orchestration: [routing], [loop], [coder3] (seed 003 §1.1, §10).

Plain pydantic models with seed 003's defaults; `duckflow.config.Config` holds them, so they sit in the foundation
(`duckflow.orchestra.settings` re-exports them). Role models
are `routing.llm.<role>_provider` + `<role>_model` (e.g. ollama + chat-v1:latest); a role left
unset uses `models.roles.<role>`, then `models.roles.default`. The legacy keys `code_provider`/`code_model`
are read as Coder1's (`coder_*`) with a deprecation note.
"""

# no `from __future__ import annotations` here: pydantic would compile every field's annotation
# string to evaluate it (a ForwardRef each; ~15% of this module's import)

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

ROUTES = ("CHAT", "PLAN", "ANALYZE", "OPS", "RESEARCH", "CODE", "CODE1", "CODE2", "CODE3")
CODE_ROUTES = frozenset({"CODE", "CODE1", "CODE2", "CODE3"})


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RoleModels(_Section):
    """Aliases and models of the fixed roles Chat / Worker / Coder1-3 (seed 003 §1.1)."""

    chat_alias: str = "Chat"
    chat_provider: str | None = None
    chat_model: str | None = None
    worker_alias: str = "Worker"
    worker_provider: str | None = None
    worker_model: str | None = None
    coder_alias: str = "Coder1"
    coder_provider: str | None = None
    coder_model: str | None = None
    coder2_alias: str = "Coder2"
    coder2_provider: str | None = None
    coder2_model: str | None = None
    coder3_alias: str = "Coder3"
    coder3_provider: str | None = None
    coder3_model: str | None = None
    # legacy (seed 003 §1.1: accepted for compatibility) — read as coder_provider / coder_model
    code_provider: str | None = None
    code_model: str | None = None
    _deprecations: list[str] = PrivateAttr(default_factory=lambda: [])  # not `list`: see core/chunks.py _Data

    @model_validator(mode="after")
    def _legacy_code_keys(self) -> "RoleModels":
        for old, new in (("code_provider", "coder_provider"), ("code_model", "coder_model")):
            value = getattr(self, old)
            if value is None:
                continue
            if getattr(self, new) is None:
                setattr(self, new, value)
            note = f"routing.llm.{old} is deprecated: use routing.llm.{new}"
            if note not in self._deprecations:
                self._deprecations.append(note)
        return self

    @property
    def deprecations(self) -> list[str]:
        return list(self._deprecations)


class ClassifierSettings(_Section):
    """The classifier (seed 003 §2.4, §10). No `model` set: no classifier call, rules then CHAT."""

    enabled: bool = True
    model: str | None = None
    min_confidence: float = Field(default=0.6, ge=0.0, le=1.0)
    min_confidence_for_code: float = Field(default=0.8, ge=0.0, le=1.0)
    timeout_s: float = Field(default=15.0, gt=0.0)


class RoutingConfig(_Section):
    """The router (seed 003 §2): rule dictionary file, classifier, fallback and role models."""

    fallback_route: str = "CHAT"
    rules_file: str | None = None  # default: the dictionary shipped in orchestra/data/
    # routes allowed to call a cloud model (seed 003 §7: cloud only for CODE unless configured)
    cloud_routes: list[str] = Field(default_factory=lambda: ["CODE", "CODE1", "CODE2", "CODE3"])
    default_coder: str = "CODE1"  # which Coder a plain CODE route uses
    events_path: str | None = None  # default: <DUCKFLOW_HOME>/events/events.jsonl
    events_max_mb: float = Field(default=20.0, gt=0.0)  # rotated past this (events.jsonl.1, .2, ...)
    events_keep: int = Field(default=3, ge=0)  # rotated files kept
    classifier: ClassifierSettings = Field(default_factory=ClassifierSettings)
    llm: RoleModels = Field(default_factory=RoleModels)

    @field_validator("fallback_route", "default_coder")
    @classmethod
    def _known_route(cls, value: str) -> str:
        value = value.strip().upper()
        if value not in ROUTES:
            raise ValueError(f"unknown route {value!r}; use one of {', '.join(ROUTES)}")
        return value

    @field_validator("cloud_routes")
    @classmethod
    def _known_routes(cls, values: list[str]) -> list[str]:
        return [cls._known_route(v) for v in values]


class LoopConfig(_Section):
    """Loop control (seed 003 §3, §10)."""

    max_loops: int = Field(default=3, ge=1)
    max_millis: int = Field(default=90_000, ge=1)
    allow_auto_reroute_once: bool = True
    allow_chat_propose_reroute_once: bool = True


class Coder3Config(_Section):
    """Coder3 limits (seed 003 §10.1); provider/model are used when routing.llm.coder3_* is unset."""

    provider: str = "anthropic"
    model: str = "claude-sonnet-4.5"
    max_tokens: int = Field(default=16_000, ge=1)
    retry_max: int = Field(default=2, ge=0)
    timeout_sec: float = Field(default=60.0, gt=0.0)


def role_model_name(role: str, routing: RoutingConfig, models: Any, coder3: Coder3Config | None = None) -> str | None:
    """The `provider:model` name a role uses, or None when nothing is configured for it.

    role: chat | worker | coder1 | coder2 | coder3. Order: routing.llm → [coder3] (Coder3 only)
    → models.roles.<role> → models.roles.default.
    """
    prefix = {"chat": "chat", "worker": "worker", "coder1": "coder", "coder2": "coder2", "coder3": "coder3"}[role]
    provider = getattr(routing.llm, f"{prefix}_provider")
    model = getattr(routing.llm, f"{prefix}_model")
    roles = getattr(models, "roles", None)
    if role == "coder3" and coder3 is not None and not model and not getattr(roles, "coder3", None):
        provider, model = provider or coder3.provider, coder3.model
    if model:
        return _join(provider, model)
    chosen = getattr(roles, role, None) or getattr(roles, "default", None)
    return str(chosen) if chosen else None


def _join(provider: str | None, model: str) -> str:
    """`ollama` + `ollama/chat-v1:latest` (seed 003 §13.4 form) or `chat-v1:latest` → `ollama:chat-v1:latest`."""
    model = model.strip()
    if provider:
        provider = provider.strip().lower()
        for sep in ("/", ":"):
            if model.lower().startswith(provider + sep):
                model = model[len(provider) + 1:]
                break
        return f"{provider}:{model}"
    return model
