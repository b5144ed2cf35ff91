"""Walking the workspace the way git sees it: .gitignore files (root and nested) respected.

Uses `pathspec`'s git-flavoured matcher. `.git/` and `.duckflow/` are always skipped. The
walk goes through directory descriptors (os.fwalk) and never follows symlinked folders.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from duckflow.workspace import fsops
from duckflow.workspace.lexical import name_key

if TYPE_CHECKING:
    import pathspec

ALWAYS_SKIPPED = frozenset({".git", ".duckflow"})
MAX_GITIGNORE_BYTES = 1_000_000


@dataclass(frozen=True)
class WalkEntry:
    """A path found by `walk`: relative to the workspace root, with its lstat."""

    rel: str
    is_dir: bool
    st: os.stat_result


class IgnoreRules:
    """The .gitignore specs met so far, keyed by the directory (relative to the root) holding them."""

    def __init__(self) -> None:
        self._specs: dict[str, pathspec.PathSpec] = {}

    def load(self, dir_rel: str, dir_fd: int) -> None:
        try:
            data = fsops.read_bytes(dir_fd, ".gitignore", MAX_GITIGNORE_BYTES)
        except (OSError, ValueError):
            return
        import pathspec  # only where a .gitignore exists (33 modules: not on every start)

        lines = data.decode("utf-8", "replace").splitlines()
        self._specs[dir_rel] = pathspec.GitIgnoreSpec.from_lines(lines)

    def load_parents(self, root_fd: int, dir_rel: str) -> None:
        """Load the .gitignore files of the root and of every folder down to `dir_rel`."""
        parts = [p for p in dir_rel.split("/") if p]
        for i in range(len(parts) + 1):
            rel = "/".join(parts[:i])
            if rel in self._specs:
                continue
            try:
                fd = fsops.walk_parent(root_fd, parts[:i], create=False)
            except OSError:
                return
            try:
                self.load(rel, fd)
            finally:
                os.close(fd)

    def ignored(self, rel: str, is_dir: bool) -> bool:
        parts = rel.split("/")
        if any(name_key(p) in ALWAYS_SKIPPED for p in parts):
            return True
        for base, spec in self._specs.items():
            prefix = base + "/" if base else ""
            if base and not rel.startswith(prefix):
                continue
            sub = rel[len(prefix):] + ("/" if is_dir else "")
            if spec.match_file(sub):
                return True
        return False


def walk(root_fd: int, start_parts: list[str], *, recursive: bool = True,
         rules: IgnoreRules | None = None) -> Iterator[WalkEntry]:
    """Yield files and folders below `start_parts` (relative to `root_fd`), ignored ones skipped."""
    rules = rules or IgnoreRules()
    start_rel = "/".join(start_parts)
    rules.load_parents(root_fd, start_rel)
    start_fd = fsops.walk_parent(root_fd, start_parts, create=False)
    try:
        for top, dirs, files, fd in os.fwalk(".", dir_fd=start_fd, follow_symlinks=False):
            sub = top[2:] if top.startswith("./") else ("" if top == "." else top)
            here = "/".join(p for p in (start_rel, sub) if p)
            if here != start_rel:
                rules.load(here, fd)
            keep: list[str] = []
            for name in sorted(dirs):
                rel = f"{here}/{name}" if here else name
                try:
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                except OSError:
                    continue
                is_dir = stat.S_ISDIR(st.st_mode)
                if rules.ignored(rel, is_dir):
                    continue
                yield WalkEntry(rel, is_dir, st)
                if is_dir:
                    keep.append(name)
            dirs[:] = keep if recursive else []
            for name in sorted(files):
                rel = f"{here}/{name}" if here else name
                if name.startswith(fsops.TEMP_PREFIX):
                    continue
                try:
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                except OSError:
                    continue
                if rules.ignored(rel, False):
                    continue
                yield WalkEntry(rel, False, st)
            if not recursive:
                break
    finally:
        os.close(start_fd)
