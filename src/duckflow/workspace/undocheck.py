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


def check_entries(root: Path, cid: int, tops: Sequence[str], entries: Sequence[sqlite3.Row]) -> dict[str, str]:
    """Refuse the whole undo when a recorded entry is not one Duckflow writes; return the tops
    the workspace's present state keeps from being restored (top -> why), to skip one by one.

    A record (forged or damaged: the index is Duckflow's own, this catches it): a plain
    relative path (no `..`, `.`, empty or absolute parts), under its recorded top, nothing in
    `.git/` or `.duckflow/`, no entry below a recorded link, file blobs named by a SHA-256.
    The workspace as it is now (not the store's fault, so never called forged): a link on
    the way to a top, or a top the guard refuses — that top is not restored, the others are
    (a link where a file was is removed itself, never followed).
    """
    from duckflow.workspace.guard import WorkspaceGuard

    guard = WorkspaceGuard(root)
    blocked: dict[str, str] = {}

    def refuse(why: str) -> CheckpointError:
        return CheckpointError(f"refused to undo #{cid}: {why}",
                               hint="nothing was changed; the checkpoint store may be damaged "
                               "or forged — choose another checkpoint")

    for top in tops:
        bad = bad_rel(top)
        if bad:
            raise refuse(f"recorded path {top!r} {bad}")
        if not _plain_parents(root, top):
            blocked[top] = "a symlink now stands on the way to it"
            continue
        verdict = guard.check(top, "delete")
        if not verdict.allowed and verdict.code not in ("symlink_outside", "symlink_loop"):
            blocked[top] = f"{verdict.reason} [{verdict.code}]"
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
    return blocked


def _plain_parents(root: Path, rel: str) -> bool:
    """True when no folder on the way to `rel` is a link (a missing one is made by the undo)."""
    import os

    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in rel.split("/")[:-1]:
            try:
                nfd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            except FileNotFoundError:
                return True
            except OSError:
                return False
            os.close(fd)
            fd = nfd
        return True
    finally:
        os.close(fd)


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
