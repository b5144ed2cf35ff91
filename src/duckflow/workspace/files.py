"""File tools of the workspace: read, write, edit, list, create, delete, move — all behind the guard.

`Workspace` binds a root, its guard, its configuration and its checkpoints. Every method
locates its paths through `WorkspaceGuard.locate` and acts on the descriptors it yields; every
mutating method records a checkpoint before it touches anything.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from duckflow.errors import DuckflowError
from duckflow.workspace import fsops
from duckflow.workspace.guard import PROTECTED_NAMES, PathRefused, Target, Verdict, WorkspaceGuard
from duckflow.workspace.ignore import walk
from duckflow.workspace.lexical import name_key

if TYPE_CHECKING:
    from duckflow.config import WorkspaceConfig
    from duckflow.workspace.checkpoints import Checkpoints

MAX_LIST_ENTRIES = 2000
BINARY_SNIFF_BYTES = 8192


class WorkspaceError(DuckflowError):
    """A workspace tool could not do what was asked (missing file, too large, binary, ...)."""


def looks_binary(data: bytes) -> bool:
    """True for content that is not text: a NUL byte early on, or not valid UTF-8."""
    head = data[:BINARY_SNIFF_BYTES]
    if b"\x00" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(head) - 4  # a multi-byte character cut at the sniff boundary is fine
    return False


@dataclass
class Workspace:
    """One workspace: root, guard, configuration, checkpoints (created on first change)."""

    guard: WorkspaceGuard
    _checkpoints: Checkpoints | None = None

    @classmethod
    def open(cls, root: str | Path, config: WorkspaceConfig | None = None) -> Workspace:
        return cls(WorkspaceGuard(root, config))

    @property
    def root(self) -> Path:
        return self.guard.root

    @property
    def config(self) -> WorkspaceConfig:
        return self.guard.config

    @property
    def checkpoints(self) -> Checkpoints:
        if self._checkpoints is None:
            from duckflow.workspace.checkpoints import Checkpoints

            self._checkpoints = Checkpoints(self.root, max_bytes=self.config.checkpoint_max_bytes)
        return self._checkpoints

    # ----------------------------------------------------------------- reading
    def read_file(self, path: str, start_line: int | None = None,
                  end_line: int | None = None) -> str:
        with self.guard.locate(path, "read", enforce=True) as t:
            self._need_file(t, path)
            assert t.dir_fd is not None
            try:
                data = fsops.read_bytes(t.dir_fd, t.name, self.config.max_read_bytes)
            except ValueError as exc:
                raise WorkspaceError(f"{exc}", hint="read a line range (start_line/end_line) "
                                     "or use search_code") from None
        if looks_binary(data):
            raise WorkspaceError(f"'{path}' is a binary file ({len(data)} bytes); not shown",
                                 hint="only text files can be read")
        text = data.decode("utf-8", "replace")
        if start_line is None and end_line is None:
            return text
        lines = text.splitlines(keepends=True)
        first = max(1, start_line or 1)
        last = min(len(lines), end_line or len(lines))
        if first > len(lines) and lines:
            raise WorkspaceError(f"'{path}' has {len(lines)} lines; line {first} does not exist")
        return "".join(lines[first - 1:last])

    def list_files(self, path: str = ".", pattern: str | None = None,
                   recursive: bool = False) -> dict[str, Any]:
        with self.guard.locate(path, "read", enforce=True) as t:
            if not t.exists:
                raise WorkspaceError(f"'{path}' does not exist", hint="list '.' to see the root")
            if not t.is_dir:
                raise WorkspaceError(f"'{path}' is a file, not a folder", hint="use read_file")
            entries: list[str] = []
            truncated = False
            for e in walk(t.root_fd, list(t.parts), recursive=recursive):
                sub = e.rel[len(t.rel) + 1:] if t.parts else e.rel
                if pattern:
                    target = sub if "/" in pattern else sub.rsplit("/", 1)[-1]
                    if not fnmatch.fnmatchcase(target, pattern):
                        continue
                if len(entries) >= MAX_LIST_ENTRIES:
                    truncated = True
                    break
                entries.append(e.rel + ("/" if e.is_dir else ""))
        return {"path": t.rel, "entries": sorted(entries), "truncated": truncated}

    # ----------------------------------------------------------------- writing
    def write_file(self, path: str, content: str, *, approved: bool = False,
                   tool: str = "write_file") -> dict[str, Any]:
        data = content.encode("utf-8")
        limit = self.config.max_write_bytes
        if len(data) > limit:
            raise WorkspaceError(f"the content is {len(data)} bytes; the write limit is {limit}",
                                 hint="split the file, or raise workspace.max_write_bytes")
        with self.guard.locate(path, "write", enforce=True, approved=approved) as t:
            if t.is_dir:
                raise WorkspaceError(f"'{path}' is a folder", hint="write to a file inside it")
            created = not t.exists
            cid = self.checkpoints.record(tool, [self._top_missing(t)], f"{tool} {t.rel}")
            fd = self._parent_fd(t)
            try:
                fsops.atomic_write(fd, t.name, data)
            finally:
                if fd != t.dir_fd:
                    os.close(fd)
        return {"path": t.rel, "bytes": len(data), "created": created, "checkpoint": cid}

    def edit_file(self, path: str, content: str, *, approved: bool = False) -> dict[str, Any]:
        from duckflow.protocols.editblocks import apply_hunks, describe_failures, parse_hunks

        hunks = parse_hunks(content)
        if hunks is None:
            result = self.write_file(path, content, approved=approved, tool="edit_file")
            return {**result, "mode": "whole_file"}
        try:
            original = self._edit_base(path)
        except WorkspaceError as exc:
            missing = "does not exist" in exc.message
            if not missing or any(h.search.strip() for h in hunks):
                raise WorkspaceError(f"cannot edit '{path}': {exc.message}",
                                     hint="create it with write_file first" if missing else
                                     exc.hint) from None
            original = ""  # only empty SEARCH sections: they create the file
        applied = apply_hunks(original, hunks)
        if not applied.ok:
            raise WorkspaceError(describe_failures(applied, path),
                                 hint="copy the SEARCH lines exactly from the file; nothing was "
                                 "changed")
        result = self.write_file(path, applied.text, approved=approved, tool="edit_file")
        return {**result, "mode": "hunks", "applied": applied.applied}

    def _edit_base(self, path: str) -> str:
        """The text an edit applies to: strict UTF-8 (read with replacement characters, the
        bytes of every line the edit does not touch would be rewritten without the diff showing
        it — a Latin-1 `café` past the binary sniff became `caf\ufffd`)."""
        text = self.read_file(path)
        if "\ufffd" not in text:
            return text
        with self.guard.locate(path, "read", enforce=True) as t:
            self._need_file(t, path)
            assert t.dir_fd is not None
            data = fsops.read_bytes(t.dir_fd, t.name, self.config.max_read_bytes)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise WorkspaceError(f"'{path}' is not UTF-8 text (byte {exc.start} is not)",
                                 hint="an edit would rewrite bytes it cannot show: convert the "
                                 "file to UTF-8 first, or write it whole with write_file") from None

    def create_directory(self, path: str) -> dict[str, Any]:
        with self.guard.locate(path, "write", enforce=True, approved=True) as t:
            if t.exists:
                if t.is_dir:
                    return {"path": t.rel, "created": False, "checkpoint": None}
                raise WorkspaceError(f"'{path}' exists and is not a folder")
            cid = self.checkpoints.record("create_directory", [self._top_missing(t)],
                                          f"create_directory {t.rel}")
            fd = fsops.walk_parent(t.root_fd, list(t.parts), create=True)
            os.close(fd)
        return {"path": t.rel, "created": True, "checkpoint": cid}

    def delete_path(self, path: str, recursive: bool = False) -> dict[str, Any]:
        with self.guard.locate(path, "delete", enforce=True) as t:
            if not t.exists or t.dir_fd is None:
                raise WorkspaceError(f"'{path}' does not exist")
            if t.is_dir:
                self._check_tree(t, recursive, path)
            cid = self.checkpoints.record("delete_path", [t.rel], f"delete_path {t.rel}")
            fsops.remove(t.dir_fd, t.name)
        return {"path": t.rel, "deleted": True, "checkpoint": cid}

    def move_path(self, src: str, dst: str, overwrite: bool = False, *,
                  approved: bool = False) -> dict[str, Any]:
        with self.guard.locate(src, "delete", enforce=True) as s, \
                self.guard.locate(dst, "write", enforce=True, follow_last=False,
                                  approved=approved) as d:
            if not s.exists or s.dir_fd is None:
                raise WorkspaceError(f"'{src}' does not exist")
            if d.exists and not overwrite:
                raise WorkspaceError(f"'{dst}' already exists", hint="pass overwrite=true to "
                                     "replace it, or choose another name")
            if s.is_dir and d.parts[:len(s.parts)] == s.parts:
                raise WorkspaceError(f"cannot move '{src}' into itself")
            cid = self.checkpoints.record("move_path", [s.rel, self._top_missing(d)],
                                          f"move_path {s.rel} -> {d.rel}")
            fd = self._parent_fd(d)
            try:
                if d.exists and d.is_dir != s.is_dir:
                    raise WorkspaceError(f"'{dst}' is a {'folder' if d.is_dir else 'file'}; "
                                         "cannot replace it with this move")
                if d.exists and d.is_dir:
                    fsops.remove(fd, d.name)
                os.rename(s.name, d.name, src_dir_fd=s.dir_fd, dst_dir_fd=fd)
            finally:
                if fd != d.dir_fd:
                    os.close(fd)
        return {"src": s.rel, "dst": d.rel, "checkpoint": cid}

    def check(self, path: str, op: str) -> Verdict:
        return self.guard.check(path, op)  # type: ignore[arg-type]

    # ----------------------------------------------------------------- helpers
    @staticmethod
    def _need_file(t: Target, path: str) -> None:
        if not t.exists:
            raise WorkspaceError(f"'{path}' does not exist", hint="list_files shows what is there")
        if t.is_dir:
            raise WorkspaceError(f"'{path}' is a folder", hint="use list_files")

    def _top_missing(self, t: Target) -> str:
        """The highest path component that does not exist yet (what a change creates)."""
        if t.dir_fd is not None:
            return t.rel
        fd = os.dup(t.root_fd)
        try:
            for i, part in enumerate(t.parts):
                try:
                    nfd = os.open(part, fsops.DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    return "/".join(t.parts[:i + 1])
                os.close(fd)
                fd = nfd
        finally:
            os.close(fd)
        return t.rel

    @staticmethod
    def _parent_fd(t: Target) -> int:
        if t.dir_fd is not None:
            return t.dir_fd
        return fsops.walk_parent(t.root_fd, list(t.parts[:-1]), create=True)

    def _check_tree(self, t: Target, recursive: bool, path: str) -> None:
        assert t.dir_fd is not None
        fd = os.open(t.name, fsops.DIR_FLAGS, dir_fd=t.dir_fd)
        try:
            names = os.listdir(fd)
            if names and not recursive:
                raise WorkspaceError(f"'{path}' is a folder with {len(names)} entries",
                                     hint="pass recursive=true to delete it with its contents")
            for top, dirs, files, _dfd in os.fwalk(".", dir_fd=fd, follow_symlinks=False):
                for d in dirs + files:  # a submodule's or worktree's `.git` is a file
                    if name_key(d) in PROTECTED_NAMES:
                        rel = posixpath.normpath(f"{t.rel}/{top}/{d}")
                        raise PathRefused(Verdict(False, False, f"'{rel}' is read-only to "
                                                  "tools; the folder cannot be deleted",
                                                  t.resolved, "protected"))
        finally:
            os.close(fd)
