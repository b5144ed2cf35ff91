"""What an approval is bound to: the workspace it was asked in and the content each path had then.

A person approves a diff shown against the files as they were. `bind(guard, paths)` records,
with the job, the workspace's resolved root and a SHA-256 per path (`absent` for a file that
did not exist, `dir:<tree hash>` for a folder). Before an approved call runs, `stale(root, guard, extra)`
says why it must not: another workspace, or a path whose content changed in between (e.g. the
person wrote their own `hello.py` after a create was asked). The caller then asks again.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from duckflow.workspace.guard import WorkspaceGuard

ABSENT = "absent"
DIRECTORY = "dir"
WORKSPACE_KEY = "workspace"
BASE_KEY = "base"
_CHUNK = 1 << 20
_TREE_LIMIT = 20_000  # entries hashed per folder; past it only the first ones count


def content_id(guard: WorkspaceGuard, path: str) -> str | None:
    """`sha256:<hex>` of the file at `path` (through the guard), `absent`, `dir:<hash of the
    tree>`, or None when the guard refuses the path (nothing to bind)."""
    from duckflow.workspace.guard import PathRefused

    try:
        with guard.locate(path, "read") as t:
            if t.st is None or t.dir_fd is None:
                return ABSENT
            if stat.S_ISDIR(t.st.st_mode):
                return _tree_id(t.open_dir())
            if not stat.S_ISREG(t.st.st_mode):
                return f"special:{stat.S_IFMT(t.st.st_mode)}"
            fd = os.open(t.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                         dir_fd=t.dir_fd)
            try:
                h = hashlib.sha256()
                while chunk := os.read(fd, _CHUNK):
                    h.update(chunk)
            finally:
                os.close(fd)
            return "sha256:" + h.hexdigest()
    except PathRefused:
        return None
    except OSError as exc:
        return f"unreadable:{exc.errno}"


def _tree_id(fd: int) -> str:
    """`dir:<sha256>` of a folder's tree (names, kinds, sizes, mtimes; links not followed), so a
    file added to a folder after its deletion was approved counts as a change. Closes `fd`."""
    h = hashlib.sha256()
    seen = 0
    try:
        for top, dirs, files, dfd in os.fwalk(".", dir_fd=fd, follow_symlinks=False):
            dirs.sort()
            for name in sorted(dirs + files):
                try:
                    st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
                except OSError:
                    continue
                h.update(f"{top}/{name}\0{stat.S_IFMT(st.st_mode)}\0{st.st_size}\0"
                         f"{st.st_mtime_ns}\n".encode("utf-8", "surrogateescape"))
                seen += 1
                if seen >= _TREE_LIMIT:
                    return f"{DIRECTORY}:{h.hexdigest()}+"
    finally:
        os.close(fd)
    return f"{DIRECTORY}:{h.hexdigest()}"


def bind(guard: WorkspaceGuard, paths: Iterable[str]) -> dict[str, Any]:
    """The binding to store with a job: the resolved root and each path's content id."""
    base: dict[str, str] = {}
    for p in dict.fromkeys(paths):
        cid = content_id(guard, p)
        if cid is not None:
            base[p] = cid
    return {WORKSPACE_KEY: str(guard.root), BASE_KEY: base}


def stale(root: Path, guard: WorkspaceGuard, extra: Mapping[str, Any]) -> tuple[str, str] | None:
    """Why an approved call bound by `extra` must not run now in `root`: (`"workspace"` or
    `"changed"`, a sentence), or None. A job recorded without a binding is not refused."""
    where = extra.get(WORKSPACE_KEY)
    if isinstance(where, str) and where != str(root):
        return ("workspace", f"it was asked for workspace {where}, and this session works in "
                f"{root}: a job, its session and its approval belong to one workspace")
    base = extra.get(BASE_KEY)
    if not isinstance(base, Mapping):
        return None
    for path, then in base.items():
        now = content_id(guard, str(path))
        if now == then:
            continue
        if now is None:
            what = f"{path} is now refused by the guard"
        elif then == ABSENT:
            what = f"{path} did not exist when the approval was asked and now exists"
        elif now == ABSENT:
            what = f"{path} existed when the approval was asked and no longer exists"
        else:
            kind = "folder" if str(then).startswith(DIRECTORY) else "file"
            what = f"{path} ({kind}) changed since the approval was asked"
        return ("changed", f"{what}; what was approved is not what would run")
    return None
