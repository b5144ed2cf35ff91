"""The workspace: a path guard and file, shell, test and code-search tools behind it.

Public names are imported lazily (the tools pull in pydantic through the engine's Tool);
the same names are imported under TYPE_CHECKING so type checkers see them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from duckflow._lazy import lazy_getattr

if TYPE_CHECKING:  # the lazy names below, for type checkers (`X as X` marks a re-export)
    from duckflow.workspace.checkpoints import CheckpointError as CheckpointError
    from duckflow.workspace.checkpoints import Checkpoints as Checkpoints
    from duckflow.workspace.files import Workspace as Workspace
    from duckflow.workspace.files import WorkspaceError as WorkspaceError
    from duckflow.workspace.guard import ApprovalRequired as ApprovalRequired
    from duckflow.workspace.guard import PathRefused as PathRefused
    from duckflow.workspace.guard import Verdict as Verdict
    from duckflow.workspace.guard import WorkspaceGuard as WorkspaceGuard
    from duckflow.workspace.search import CodeIndex as CodeIndex
    from duckflow.workspace.tools import workspace_tools as workspace_tools

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

__getattr__ = lazy_getattr(globals(), _EXPORTS)
