"""Loads the plugins your config declares when a command starts; a failing one is named in one line.

Cheap when none are declared: the config file's bytes are looked at for a `plugins` table before
anything (tomllib, pydantic, the config model) is imported. A workspace's config cannot declare
plugins (that would run a cloned repository's code), so only your own file is read.
"""

from __future__ import annotations

import sys

_done = False


def declares_plugins() -> bool:
    """Whether your config file may declare plugins (a `plugins` table or key is in its text)."""
    import os

    from duckflow.paths import config_file

    path = config_file()
    if str(path) == os.devnull:
        return False
    from duckflow.safe_read import read_regular

    try:  # a capped regular file, opened without blocking (a FIFO or a device is not read here)
        raw = read_regular(path)
    except OSError:  # (UnsafeFile too) the command's own config read names the problem
        return False
    return b"plugins" in raw


def load_at_start(*, quiet: bool = False) -> list[object]:
    """Load the declared plugins once per process; print each failure as one line on stderr."""
    global _done
    if _done or not declares_plugins():
        return []
    _done = True
    from duckflow.config import load_config
    from duckflow.core.plugins import load_declared

    cfg = load_config().plugins
    statuses = load_declared(cfg.modules, cfg.entry_points)
    if not quiet:
        for st in statuses:
            if st.error:
                print(f"duckflow: plugin {st.name} did not load: {st.error} (the others run; "
                      "`duckflow plugins` lists them)", file=sys.stderr)
    return list(statuses)
