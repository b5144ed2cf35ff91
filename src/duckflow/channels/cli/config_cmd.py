"""`duckflow config show`: every effective setting and where it came from (default, file or env).

    duckflow config show                 # one line per setting: key = value   [source]
    duckflow config show --json          # {"key": {"value": ..., "source": ...}, ...}
    duckflow config show --section loop  # one section only

The sources are read the way `load_config` reads them (built-in defaults → your config file →
the workspace's .duckflow/config.toml → environment variables); a later source wins.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from duckflow.channels.cli.common import add_workspace, print_json


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", default="show", choices=["show"], help="what to do (show)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--section", default=None, help="only this section (e.g. routing, loop, models)")
    add_workspace(parser, default=None, help="workspace whose .duckflow/config.toml applies")


def _leaves(data: Any, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(data, dict) and data:
        for key, value in data.items():
            out.update(_leaves(value, f"{prefix}.{key}" if prefix else str(key)))
    else:
        out[prefix] = data
    return out


def _file_keys(path: Path, root: Path | None = None) -> set[str]:
    """The dotted keys a config file sets, read the way load_config reads it (regular file, no links)."""
    import duckflow.config as cfgmod
    from duckflow.errors import ConfigError

    try:
        data = cfgmod._read_toml(path, root=root) if root is not None else cfgmod._read_toml(path)
    except (ConfigError, TypeError, ValueError):
        return set()
    return set(_leaves(data))


def _covered(key: str, keys: set[str]) -> bool:
    """A file sets `key` itself or a table above it (e.g. `models.base_urls` as one table)."""
    return key in keys or any(k.startswith(key + ".") or key.startswith(k + ".") for k in keys)


def _legacy_keys() -> dict[str, str]:
    """New dotted key -> the old key that may still set it (the sections' `_LEGACY` tables)."""
    from duckflow.config import GateConfig, ModelsConfig

    out = {"routing.llm.coder_provider": "routing.llm.code_provider",
           "routing.llm.coder_model": "routing.llm.code_model", **_seed_aliases()}
    for section in (ModelsConfig, GateConfig):
        out.update({f"{section._SECTION}.{new}": f"{section._SECTION}.{old}"
                    for old, new in section._LEGACY.items()})
    return out


def _seed_aliases() -> dict[str, str]:
    """Today's dotted key -> the seed's name read as its alias (`Config._LEGACY`)."""
    from duckflow.config import Config

    return {new: old for old, new in Config._LEGACY.items()}


def effective(workspace: str | None = None, env: dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """{dotted key: {"value", "source"}} for every setting of the loaded configuration."""
    import os

    import duckflow.config as cfgmod
    from duckflow.paths import config_file, workspace_state_dir

    environ = dict(os.environ if env is None else env)
    config = cfgmod.load_config(workspace, env=environ)
    values = _leaves(config.model_dump(mode="json"))
    user_file = config_file()
    user_keys = _file_keys(user_file)
    ws_file = workspace_state_dir(workspace) / "config.toml" if workspace is not None else None
    ws_keys = _file_keys(ws_file, Path(workspace).resolve()) if ws_file is not None and workspace else set()
    env_map: dict[str, tuple[str, str]] = getattr(cfgmod, "_ENV", {})
    env_keys = {f"{section}.{key}": var for var, (section, key) in env_map.items() if environ.get(var)}
    out: dict[str, dict[str, Any]] = {}
    legacy_keys = _legacy_keys()
    seed_aliases = _seed_aliases()
    for key, value in values.items():
        if key in env_keys:
            source = f"env {env_keys[key]}"
        elif ws_file is not None and _covered(key, ws_keys):
            source = f"file {ws_file}"
        elif _covered(key, user_keys):
            source = f"file {user_file}"
        else:
            source = "default"
        legacy = legacy_keys.get(key)
        alias = seed_aliases.get(key)
        if source == "default" and alias and (alias in user_keys or alias in ws_keys):
            source = f"file {ws_file if alias in ws_keys else user_file} as {alias}"
        elif source == "default" and legacy and (legacy in user_keys or legacy in ws_keys
                                               or values.get(legacy) is not None):
            source = f"legacy key {legacy}"
        out[key] = {"value": value, "source": source}
    notes = config.deprecations
    if notes:
        out["_deprecations"] = {"value": notes, "source": "config"}
    return out


# seed 003 §10 names → where the effective value lives (shown by `config show` after the settings)
SEED_NAMES = {
    "routing.classifier.min_confidence": "routing.classifier.min_confidence",
    "routing.classifier.min_confidence_for_code": "routing.classifier.min_confidence_for_code",
    "loop.max_loops": "loop.max_loops",
    "loop.max_millis": "loop.max_millis",
    "loop.allow_auto_reroute_once": "loop.allow_auto_reroute_once",
    "loop.allow_chat_propose_reroute_once": "loop.allow_chat_propose_reroute_once",
    "options.num_ctx": "models.ollama.num_ctx",
    "providers.ollama_restart_command": "models.ollama.restart_command",
    "ModelRequirement.MaxContext": "models.max_context",
    "ModelRequirement.MinContext": "models.min_context",
    "coder3.provider": "coder3.provider",
    "coder3.model": "coder3.model",
    "coder3.max_tokens": "coder3.max_tokens",
    "coder3.retry_max": "coder3.retry_max",
    "coder3.timeout_sec": "coder3.timeout_sec",
    "approval.required_by_default": "gate.require_approval",
    "approval.auto_approve.scope.allowed_task_types": "gate.auto_approve.task_types",
    "approval.auto_approve.scope.allowed_paths_prefix": "gate.auto_approve.paths",
    "approval.auto_approve.scope.deny_operations": "gate.auto_approve.deny_operations",
    "approval.auto_approve.ttl_minutes": "gate.auto_approve.ttl_min",
    "approval.auto_approve.enabled": "gate.auto_approve.enabled",
    "approval.hard_require_approval": "gate.hard_required",
}
FIXED = {
    "keep_alive": (-1, "every Ollama request carries keep_alive -1 (llm/ollama.py)"),
}


def seed_names(rows: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Seed 003 §10's names with their effective value and the setting that holds it."""
    out: dict[str, dict[str, Any]] = {}
    for seed, key in SEED_NAMES.items():
        row = rows.get(key)
        if row is not None:
            out[seed] = {"value": row["value"], "source": row["source"] if key == seed else f"{key}, {row['source']}"}
    for seed, (value, why) in FIXED.items():
        out[seed] = {"value": value, "source": why}
    return out


def run(args: argparse.Namespace) -> int:
    rows = effective(args.workspace)
    if args.section:
        prefix = args.section.rstrip(".") + "."
        rows = {k: v for k, v in rows.items() if k.startswith(prefix) or k == "_deprecations"}
        if not any(k != "_deprecations" for k in rows):
            from duckflow.errors import ConfigError

            raise ConfigError(f"no configuration section {args.section!r}",
                              hint="run `duckflow config show` to see every section")
    seed = seed_names(rows) if not args.section else {}
    box = None
    if "workspace.sandbox" in rows:
        from duckflow.workspace.box import describe

        box = describe(str(rows["workspace.sandbox"]["value"]))
    if args.json:
        if seed:
            rows["_seed_003_names"] = {"value": seed, "source": "seed 003 §10"}
        if box:
            rows["_box"] = {"value": box, "source": "detected on this machine"}
        print_json(rows)
        return 0
    notes = rows.pop("_deprecations", None)
    width = max((len(k) for k in rows), default=0)
    for key, row in rows.items():
        print(f"{key.ljust(width)} = {json.dumps(row['value'], ensure_ascii=False)}   [{row['source']}]")
    if seed:
        print("\nthe design notes' names (also accepted in the config file):")
        width = max(len(k) for k in seed)
        for key, row in seed.items():
            print(f"  {key.ljust(width)} = {json.dumps(row['value'], ensure_ascii=False)}   [{row['source']}]")
    if box:
        print(f"\nbox for auto-approved code (workspace.sandbox): {box}")
    for note in (notes or {}).get("value", []):
        print(f"note: {note}")
    return 0
