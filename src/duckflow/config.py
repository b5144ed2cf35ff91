"""One typed configuration: a TOML file plus environment variables, defaults from the seeds.

Sources, later ones win: built-in defaults → the user's file (`paths.config_file()`) →
the workspace's `.duckflow/config.toml` → environment variables named below.
Every section is its own pydantic model; a subsystem reads only its section.
"""

# no `from __future__ import annotations` here: pydantic would compile every field's annotation
# string to evaluate it (a ForwardRef each; ~15% of this module's import)

import difflib
import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    Field,
    ValidationError,
    field_validator,
)

from duckflow._configkeys import _Section
from duckflow.errors import ConfigError
from duckflow.mcp_config import McpServerConfig
from duckflow.orchestra_config import Coder3Config, LoopConfig, RoutingConfig, role_model_name
from duckflow.paths import config_file, workspace_state_dir


class ModelRoles(_Section):
    """Which model plays which role (seed 003 §3); an unset role uses `default`."""

    default: str | None = None
    chat: str | None = None
    worker: str | None = None
    coder1: str | None = None
    coder2: str | None = None
    coder3: str | None = None


class OllamaSettings(_Section):
    """The Ollama server: where it is, how to restart it, the context it is asked for."""

    host: str = "http://127.0.0.1:11434"
    restart_command: str | None = None
    restart_wait_s: float = 60.0
    num_ctx: int = 8192


class ModelsConfig(_Section):
    """Models: `[models.roles]` (names are `provider:model`), `[models.ollama]`, providers' URLs,
    retries and fallbacks. The flat keys of earlier versions (`models.chat`,
    `models.ollama_host`, `models.anthropic_base_url`, ...) are still read, with a note."""

    _SECTION = "models"
    _LEGACY = {**{r: f"roles.{r}" for r in ("default", "chat", "worker", "coder1", "coder2", "coder3")},
               "ollama_host": "ollama.host", "ollama_restart_command": "ollama.restart_command",
               "ollama_restart_wait_s": "ollama.restart_wait_s", "ollama_num_ctx": "ollama.num_ctx",
               "anthropic_base_url": "base_urls.anthropic"}

    roles: ModelRoles = Field(default_factory=ModelRoles)
    ollama: OllamaSettings = Field(default_factory=OllamaSettings)
    fallbacks: list[str] = []  # copied per instance; a literal, not default_factory=list/dict (see core/chunks.py)
    # bounds on the model's own context_length (/api/show); seed 003 uses max 8192 for its
    # custom 8k models, which would reject most stock models, hence the wider default
    min_context: int = 4096
    max_context: int = 131072
    request_timeout_s: float = 120.0
    # the whole model call, however the server trickles (keep-alives); see docs/llm.md
    request_deadline_s: float = Field(default=600.0, gt=0, allow_inf_nan=False)
    # provider -> base URL: anthropic, and the OpenAI-compatible ones (openai, openrouter, vllm,
    # lmstudio, llamacpp)
    base_urls: dict[str, str] = {}
    retries: int = 3
    circuit_threshold: int = 3
    circuit_cooldown_s: float = 30.0
    # in-process llama.cpp (`local:` models, docs/local.md)
    local_path: str | None = None  # a GGUF used for `local:default` instead of the bundled one
    local_context: int = 8192
    local_threads: int = 0  # threads that generate; 0: every core but one (at least 1, at most 8)
    # local models (in-process, or any server on this machine): grammar-constrained, bounded replies
    constrained_decoding: bool = True

    def for_role(self, role: str) -> str | None:
        """The model named for `role` (chat, worker, coder1..3), else `default`, else None."""
        return getattr(self.roles, role, None) or self.roles.default


# Files a shell, a desktop or Windows runs by themselves when opened or named as a command;
# the list and why .py/.js are not on it: docs/gate.md "Dangerous extensions".
DANGEROUS_EXTENSIONS = (
    ".sh", ".bash", ".zsh", ".ksh", ".csh", ".tcsh", ".fish", ".command", ".tool",
    ".ps1", ".psm1", ".psd1", ".ps1xml", ".bat", ".cmd", ".com", ".exe", ".scr", ".pif",
    ".cpl", ".msi", ".msp", ".msc", ".vbs", ".vbe", ".jse", ".wsf", ".wsh", ".ws", ".hta",
    ".jar", ".app", ".reg", ".lnk", ".scf", ".inf", ".gadget", ".desktop", ".appimage",
    ".run", ".deb", ".rpm", ".pkg", ".dmg",
)


class WorkspaceConfig(_Section):
    """The guard and the workspace tools (seed 001 §12, seed 002 tool set)."""

    dangerous_extensions: list[str] = Field(default_factory=lambda: list(DANGEROUS_EXTENSIONS))
    dangerous_extensions_mode: Literal["refuse", "approve"] = "refuse"
    max_read_bytes: int = 2_000_000
    max_write_bytes: int = 2_000_000
    shell_timeout_s: float = 60.0
    shell_max_timeout_s: float = 600.0
    shell_output_limit: int = 20_000
    sandbox: Literal["auto", "bwrap", "landlock", "seatbelt", "none"] = "auto"
    # extra environment variable names a shell command may see, and extra read-only paths
    # inside bubblewrap (a toolchain in /opt, say); see docs/workspace.md
    shell_env_allow: list[str] = []
    sandbox_ro_paths: list[str] = []
    search_max_file_bytes: int = 1_000_000
    checkpoint_max_bytes: int = 200_000_000


class AutoApproveConfig(_Section):
    """The default scope of `duckflow autoapprove on` (seed 003 §10.2: design/review, docs/ only).

    `enabled` switches that scope on for `ttl_min` minutes whenever a command opens the gate
    and no scope is in force, unless a person switched auto-approve off (`off` always wins)."""

    enabled: bool = False
    ttl_min: int = 60
    task_types: list[str] = Field(default_factory=lambda: ["design", "review"])
    tools: list[str] = Field(default_factory=lambda: ["*"])
    paths: list[str] = Field(default_factory=lambda: ["docs/"])
    deny_operations: list[str] = Field(default_factory=lambda: ["delete", "rename", "push_public"])
    max_risk: Literal["low", "medium", "high"] = "medium"


class GateConfig(_Section):
    """Approval defaults (seed 003 §6.4, §10.2): approval is required unless scoped otherwise.

    `hard_required` can only ADD operations: the built-in set (delete, rename, send_sensitive,
    push_public, cost_over_limit, outside_workspace, dangerous_extension, broad_overwrite) is
    always hard-required. See docs/gate.md.
    """

    _SECTION = "gate"
    _LEGACY = {f"auto_approve_{k}": f"auto_approve.{k}"
               for k in ("ttl_min", "task_types", "tools", "paths", "deny_operations", "max_risk")}

    require_approval: bool = True
    db_path: str | None = None
    audit_path: str | None = None
    hard_required: list[str] = Field(
        default_factory=lambda: [
            "delete",
            "rename",
            "send_sensitive",
            "push_public",
            "cost_over_limit",
            "outside_workspace",
            "dangerous_extension",
            "broad_overwrite",
        ]
    )
    refuse_operations: list[str] = []
    cost_limit: float | None = None
    broad_overwrite_files: int = 10
    pending_expiry_min: int | None = None
    risk_rules_file: str | None = None
    auto_approve: AutoApproveConfig = Field(default_factory=lambda: AutoApproveConfig())


class BudgetConfig(_Section):
    """Per-layer prompt token budget (seed 001 §11)."""

    base_tokens: int = 500
    main_tokens: int = 800
    specialized_tokens: int = 1200


class CompanionConfig(_Section):
    """The companion conversation (seed 001)."""

    language: Literal["en", "ja"] = "en"
    # auto: native tool calling where it is known reliable (llm/toolcalling.py), else Sym-Ops
    codec: Literal["auto", "native", "symops", "dml"] = "auto"
    # the turn shape: two calls (Main JSON decision + Specialized) or one constrained Sym-Ops
    # reply per step; `auto` picks single-call for local models below `single_call_below_b`
    mode: Literal["auto", "two_call", "single_call"] = "auto"
    single_call_below_b: float = 4.0
    # every task ends: at most this many model calls and seconds (said at its start), then it stops
    # with what it has (companion/task.py Budget)
    task_max_calls: int = Field(default=16, ge=1, le=200)
    task_time_budget_s: float = Field(default=280.0, gt=0, le=86400)
    transitions_file: str | None = None
    max_recovery_retries: int = 2
    # regular expressions a message or a reply must not match (core Guardrails on both)
    block_patterns: list[str] = []
    # the project's AGENTS.md read into the prompts (as data), within this many tokens
    agents_md: bool = True
    agents_md_tokens: int = Field(default=600, ge=0, le=8000)

    @field_validator("block_patterns")
    @classmethod
    def _patterns_compile(cls, value: list[str]) -> list[str]:
        import re

        for pattern in value:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"{pattern!r} is not a regular expression ({exc})") from None
        return value


class TokenGuardConfig(_Section):
    """Cumulative tokens per session (seed 004 §3-4)."""

    warn_at: int = 200_000
    block_at: int = 400_000
    backend: Literal["memory", "sqlite", "redis"] = "sqlite"
    redis_url: str | None = None
    db_path: str | None = None  # sqlite backend; default <DUCKFLOW_HOME>/token_guard.db


class TraceConfig(_Section):
    """JSONL traces and optional OTLP export (seed 004 §3-6). See docs/traces.md.

    `path` defaults to `<DUCKFLOW_HOME>/traces/<UTC date>.jsonl`; `otlp_endpoint` is the
    collector's OTLP/HTTP base URL (`/v1/traces` is appended), also read from
    `TRACE_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_ENDPOINT`. Records are always masked.
    """

    enabled: bool = True
    path: str | None = None
    otlp_endpoint: str | None = None
    service_name: str = "duckflow"


class ServerConfig(_Section):
    """`duckflow serve` on several processes (docs/deploy.md); the flags and DUCKFLOW_REDIS_URL /
    DUCKFLOW_DATABASE_URL come first. Both unset: one process on SQLite."""

    redis_url: str | None = None
    database_url: str | None = None
    workers: int = Field(default=1, ge=1, le=64)


class PluginsConfig(_Section):
    """Plugins every command loads at start (docs/engine.md "ToolRegistry and plugins"): module paths (`pkg.mod` gives its
    Tool objects, `pkg.mod:attr` a tool, a function or a list) and installed `duckflow.tools`
    entry points by name (`*`: all). Only your own config file may name them."""

    modules: list[str] = []
    entry_points: list[str] = []


class Config(_Section):
    """Every section; `deprecations` lists the old keys that were read (see `_Section`).

    Seed 003 §10's own names are read as aliases of today's keys (`config show` names them)."""

    _LEGACY = {
        "approval.required_by_default": "gate.require_approval",
        "approval.auto_approve.enabled": "gate.auto_approve.enabled",
        "approval.auto_approve.ttl_minutes": "gate.auto_approve.ttl_min",
        "approval.auto_approve.scope.allowed_task_types": "gate.auto_approve.task_types",
        "approval.auto_approve.scope.allowed_paths_prefix": "gate.auto_approve.paths",
        "approval.auto_approve.scope.deny_operations": "gate.auto_approve.deny_operations",
        "approval.hard_require_approval": "gate.hard_required",
        "providers.ollama_restart_command": "models.ollama.restart_command",
    }
    _NOTE = "{old} (the seed's name) is read as {new}"
    _WARN = False

    models: ModelsConfig = Field(default_factory=ModelsConfig)
    workspace: WorkspaceConfig = Field(default_factory=WorkspaceConfig)
    gate: GateConfig = Field(default_factory=GateConfig)
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    companion: CompanionConfig = Field(default_factory=CompanionConfig)
    token_guard: TokenGuardConfig = Field(default_factory=TokenGuardConfig)
    trace: TraceConfig = Field(default_factory=TraceConfig)
    # seed 003 orchestration: router, loop control, Coder3 limits (duckflow/orchestra_config.py)
    routing: RoutingConfig = Field(default_factory=RoutingConfig)
    loop: LoopConfig = Field(default_factory=LoopConfig)
    coder3: Coder3Config = Field(default_factory=Coder3Config)
    server: ServerConfig = Field(default_factory=ServerConfig)
    plugins: PluginsConfig = Field(default_factory=PluginsConfig)
    # MCP servers whose tools join the companion's and the engine's (duckflow/mcp_config.py); the
    # workspace's own (its .duckflow/config.toml) are kept apart: they start only after your yes
    mcp_servers: dict[str, McpServerConfig] = {}
    workspace_mcp_servers: dict[str, McpServerConfig] = Field(default={}, exclude=True)

    @property
    def deprecations(self) -> list[str]:
        return [*self._deprecations, *self.models.deprecations, *self.gate.deprecations,
                *self.routing.llm.deprecations]


_ENV: dict[str, tuple[str, str]] = {
    "DUCKFLOW_MODEL": ("models", "roles.default"),
    "OLLAMA_HOST": ("models", "ollama.host"),
    "TRACE_OTLP_ENDPOINT": ("trace", "otlp_endpoint"),
    "OTEL_EXPORTER_OTLP_ENDPOINT": ("trace", "otlp_endpoint"),
    "DUCKFLOW_LANGUAGE": ("companion", "language"),
    "DUCKFLOW_CODEC": ("companion", "codec"),
    "DUCKFLOW_MODE": ("companion", "mode"),
}


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _read_toml(path: Path, *, root: Path | None = None) -> dict[str, Any]:
    """A TOML file as a dict ({} when missing). With `root`, `path` is read without following
    any link from `root` (a workspace's file); always a regular file of at most 1 MB."""
    from duckflow.safe_read import UnsafeFile, read_inside, read_regular

    if root is None and str(path) == os.devnull:  # DUCKFLOW_CONFIG=/dev/null: no config file
        return {}
    try:
        raw = read_regular(path) if root is None else read_inside(root, path.relative_to(root))
    except FileNotFoundError:
        return {}
    except UnsafeFile as exc:
        hint = (f"remove or replace {path}" if root is not None or "DUCKFLOW_CONFIG" not in os.environ
                else "point DUCKFLOW_CONFIG at a TOML file, or unset it")
        raise ConfigError(f"config file {exc}", hint=hint) from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}",
                          hint=f"fix the permissions of {path} or move it aside") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})",
                          hint="save the file as UTF-8") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"{path}: not valid TOML ({exc}).", hint="fix the file or move it aside"
        ) from exc
    except RecursionError:
        raise ConfigError(f"{path}: nested too deeply to read",
                          hint="fix the file or move it aside") from None


def _confine_paths(root: Path, path: Path, data: dict[str, Any]) -> None:
    """Paths a workspace file names must stay inside the workspace; stored resolved."""
    comp = data.get("companion")
    if not isinstance(comp, dict) or not isinstance(comp.get("transitions_file"), str):
        return
    from duckflow.safe_read import inside

    target = inside(root, comp["transitions_file"])
    if target is None:
        raise ConfigError(
            f"{path}: companion.transitions_file = {comp['transitions_file']!r} is outside the "
            "workspace (a workspace file may only name files inside it).",
            hint=f"use a path inside {root}, or set it in {config_file()}",
        )
    comp["transitions_file"] = str(target)


# A workspace may ship its own `.duckflow/config.toml` (a cloned repository can carry one), so it
# may only tune how the companion talks — never the guard, the gate, models, traces or limits,
# which would let a repository loosen the protections of the person who opened it.
# Inside those sections, only the keys of how it talks: `companion.block_patterns` are your
# guardrails (a workspace `block_patterns = []` would wipe them, a backtracking pattern would hang
# every message) and `max_recovery_retries` bounds what a failing task may spend.
WORKSPACE_SECTIONS = frozenset({"budget", "companion"})
WORKSPACE_KEYS: dict[str, frozenset[str]] = {
    "budget": frozenset({"base_tokens", "main_tokens", "specialized_tokens"}),
    "companion": frozenset({"language", "codec", "mode", "single_call_below_b", "transitions_file"}),
}


def _refuse_loosening(path: Path, data: dict[str, Any]) -> None:
    bad = sorted(set(data) - WORKSPACE_SECTIONS)
    bad += sorted(f"{section}.{key}" for section, keys in WORKSPACE_KEYS.items()
                  if isinstance(data.get(section), dict) for key in set(data[section]) - keys)
    if bad:
        from duckflow.config_keys import misspelled

        misspelled(Config, path, bad)  # a near miss of a real key is said as such
        raise ConfigError(
            f"{path}: {', '.join(bad)} may only be set in your own config file, not in a "
            "workspace (a repository must not loosen the guard, gate, guardrails or models).",
            hint=f"move them to {config_file()} or delete them from {path}",
        )


def resolve_role(role: str, config: Config) -> str | None:
    """The one answer to "which model does this role use": chat | worker | coder1 | coder2 | coder3.

    Order: `routing.llm.<role>_model` (with its provider) → `[coder3]` (Coder3 only) →
    `models.roles.<role>` → `models.roles.default`; None when nothing is configured.
    """
    return role_model_name(role, config.routing, config.models, config.coder3)


def load_config(workspace: str | Path | None = None, *, env: dict[str, str] | None = None) -> "Config":
    """Load the configuration; a broken file raises ConfigError naming the file and the key."""
    environ = os.environ if env is None else env
    data: dict[str, Any] = {}
    sources = [config_file()]
    data = _read_toml(sources[0])
    data.pop("workspace_mcp_servers", None)  # only a workspace's file fills it
    if workspace is not None:
        ws_file = workspace_state_dir(workspace) / "config.toml"
        sources.append(ws_file)
        ws_data = _read_toml(ws_file, root=Path(workspace))
        repo_servers = ws_data.pop("mcp_servers", None)  # a repository's: apart, never merged with yours
        ws_data.pop("workspace_mcp_servers", None)
        if repo_servers is not None:
            ws_data["workspace_mcp_servers"] = repo_servers
        _refuse_loosening(ws_file, {k: v for k, v in ws_data.items() if k != "workspace_mcp_servers"})
        _confine_paths(Path(workspace), ws_file, ws_data)
        data = _merge(data, ws_data)
    for var, (section, key) in _ENV.items():  # key may be "table.key" inside the section
        if environ.get(var):
            target = data.setdefault(section, {})
            *tables, last = key.split(".")
            for table in tables:
                target = target.setdefault(table, {}) if isinstance(target, dict) else target
            if isinstance(target, dict):
                target[last] = environ[var]
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        if first["type"] == "extra_forbidden":  # a misspelled key: a did-you-mean, not pydantic's text
            from duckflow.config_keys import known_keys, unknown_key

            extra, loc = first.get("input"), list(first["loc"])
            near = difflib.get_close_matches(str(loc[-1]), known_keys(Config, loc[:-1]), n=1)
            while not near and isinstance(extra, dict) and extra:
                key = next(iter(extra))  # a whole unknown table (`[approval]` with a misspelt key): name a key in it
                loc.append(key)
                extra = extra[key]

            raise unknown_key(Config, loc, ", ".join(str(s) for s in sources)) from exc
        raise ConfigError(
            f"invalid configuration at '{where}': {first['msg']}",
            hint=f"check {', '.join(str(s) for s in sources)} and the environment",
        ) from exc
