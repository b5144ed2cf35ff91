"""The workspace: a path guard and file, shell, test and code-search tools behind it.

Public names are imported lazily (the tools pull in pydantic through the engine's Tool).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "WorkspaceGuard": "duckflow.workspace.guard",
    "Verdict": "duckflow.workspace.guard",
    "PathRefused": "duckflow.workspace.guard",
    "ApprovalRequired": "duckflow.workspace.guard",
    "Workspace": "duckflow.workspace.files",
    "WorkspaceError": "duckflow.workspace.files",
    "Checkpoints": "duckflow.workspace.checkpoints",
    "CheckpointError": "duckflow.workspace.checkpoints",
    "CodeIndex": "duckflow.workspace.search",
    "workspace_tools": "duckflow.workspace.tools",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'duckflow.workspace' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
