"""Checks every recorded checkpoint entry before an undo restores it (nothing outside the root).

The checkpoint index is Duckflow's own (workspace/checkpoints.py keeps it in DUCKFLOW_HOME),
but an undo still trusts none of its rows: a damaged or forged one is refused with the whole
undo, before anything is read or touched.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from duckflow.errors import DuckflowError

KINDS = frozenset({"file", "dir", "link"})
HEX = frozenset("0123456789abcdef")


class CheckpointError(DuckflowError):
    """A checkpoint could not be recorded or restored (defined here, below checkpoints.py, which re-exports it)."""


def check_entries(root: Path, cid: int, tops: Sequence[str], entries: Sequence[sqlite3.Row]) -> None:
    """Refuse the whole undo when any recorded entry could act outside the workspace.

    The same rules as every write: a plain relative path (no `..`, `.`, empty or absolute
    parts), under its recorded top, nothing in `.git/` or `.duckflow/`, no symlink on the
    way to the top (the guard's own walk), no entry below a recorded link, file blobs
    named by a SHA-256. The index is Duckflow's own; this catches a damaged or forged one.
    """
    from duckflow.workspace.guard import WorkspaceGuard

    guard = WorkspaceGuard(root)

    def refuse(why: str) -> CheckpointError:
        return CheckpointError(f"refused to undo #{cid}: {why}",
                               hint="nothing was changed; the checkpoint store may be damaged "
                               "or forged — choose another checkpoint")

    for top in tops:
        bad = bad_rel(top)
        if bad:
            raise refuse(f"recorded path {top!r} {bad}")
        verdict = guard.check(top, "delete")
        if not verdict.allowed:
            raise refuse(f"recorded path {top!r}: {verdict.reason} [{verdict.code}]")
        if verdict.resolved != root.joinpath(*top.split("/")):
            raise refuse(f"recorded path {top!r} goes through a symlink")
    links: set[str] = set()
    for e in sorted(entries, key=lambda r: (str(r["path"]).count("/"), r["seq"])):
        path, top = e["path"], e["top"]
        if not isinstance(path, str) or not isinstance(top, str) or top not in tops:
            raise refuse("an entry does not belong to the checkpoint's paths")
        bad = bad_rel(path)
        if bad:
            raise refuse(f"recorded path {path!r} {bad}")
        if path != top and not path.startswith(top + "/"):
            raise refuse(f"recorded path {path!r} is not inside {top!r}")
        if not e["existed"]:
            continue
        if e["kind"] not in KINDS:
            raise refuse(f"recorded path {path!r} has an unknown kind {e['kind']!r}")
        parts = path.split("/")
        if any("/".join(parts[:i]) in links for i in range(1, len(parts))):
            raise refuse(f"recorded path {path!r} lies below a recorded symlink")
        if e["kind"] == "link":
            if not isinstance(e["link"], str) or not e["link"]:
                raise refuse(f"recorded link {path!r} has no target")
            links.add(path)
        if e["kind"] == "file" and not is_digest(e["blob"]):
            raise refuse(f"recorded file {path!r} names no valid content hash")


def bad_rel(rel: object) -> str | None:
    """Why `rel` is not a plain workspace-relative path as Duckflow records them, or None."""
    from duckflow.workspace.guard import PROTECTED_NAMES
    from duckflow.workspace.lexical import name_key

    if not isinstance(rel, str) or not rel:
        return "is empty"
    if "\x00" in rel:
        return "contains a NUL byte"
    if rel.startswith("/"):
        return "is absolute"
    for part in rel.split("/"):
        if part in ("", ".", ".."):
            return "has an empty, '.' or '..' component"
        if name_key(part) in PROTECTED_NAMES:
            return f"is inside '{part}/', which Duckflow never changes"
    return None


def is_digest(value: object) -> bool:
    return isinstance(value, str) and len(value) == 64 and set(value) <= HEX
