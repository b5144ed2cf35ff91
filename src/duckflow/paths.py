"""Where Duckflow keeps its state: a per-user home and a per-workspace `.duckflow/` folder."""

from __future__ import annotations

import os
from pathlib import Path

WORKSPACE_STATE_DIRNAME = ".duckflow"


def duckflow_home() -> Path:
    """Per-user state (sessions, approvals, token counters, traces).

    `DUCKFLOW_HOME` wins; then `$XDG_DATA_HOME/duckflow`; then `~/.local/share/duckflow`.
    """
    env = os.environ.get("DUCKFLOW_HOME")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base / "duckflow"


def workspace_state_dir(root: str | Path) -> Path:
    """Per-workspace state (config). Read-only to tools. Checkpoints and the code-search index
    are not kept here but in `duckflow_home()` (a repository could plant them)."""
    return Path(root) / WORKSPACE_STATE_DIRNAME


def config_file() -> Path:
    """The user's config file: `DUCKFLOW_CONFIG`, else `$XDG_CONFIG_HOME/duckflow/config.toml`."""
    env = os.environ.get("DUCKFLOW_CONFIG")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".config"
    return base / "duckflow" / "config.toml"


def check_config_env() -> None:
    """An explicit `DUCKFLOW_CONFIG` that names no file gets a one-line warning on stderr (the
    `duckflow` command checks before any command runs): a misspelled path would otherwise run
    everything with the defaults, silently. It warns rather than stops, because pointing the
    variable at a file that is not there is also how scripts and test harnesses say "no user
    config" (this project's own tests did). Unset or empty: the default path, which may be
    missing; `/dev/null`: no config file, said explicitly (no warning)."""
    value = os.environ.get("DUCKFLOW_CONFIG")
    if not value or value == os.devnull:
        return
    path = Path(value).expanduser()
    if not path.exists():
        import sys

        print(f"duckflow: warning: DUCKFLOW_CONFIG names {path}, which does not exist; the defaults "
              "apply (next: fix the path, or set DUCKFLOW_CONFIG=/dev/null for no config file)",
              file=sys.stderr)
