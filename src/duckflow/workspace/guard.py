"""The workspace guard: decides whether a path may be read, written, deleted or executed.

Every path is resolved inside the workspace root by walking it one component at a time
from a directory file descriptor, opening each directory with O_NOFOLLOW | O_DIRECTORY.
Symlinks are resolved by hand, inside the root (like a chroot): one that leads outside is
refused. Because the file operations in this package use the same descriptors
(`WorkspaceGuard.locate`), a directory swapped for a link between check and use makes the
operation fail instead of escaping. See docs/workspace.md for what is and is not covered.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from duckflow.errors import DuckflowError
from duckflow.workspace.lexical import Lexical, Refusal, dangerous_suffix, name_key, split_path

if TYPE_CHECKING:
    from duckflow.config import WorkspaceConfig

Op = Literal["read", "write", "delete", "execute"]
OPS: tuple[str, ...] = ("read", "write", "delete", "execute")
PROTECTED_NAMES = frozenset({".git", ".duckflow"})
MAX_SYMLINK_HOPS = 40  # the kernel's own limit (MAXSYMLINKS)
_SHORT_GIT = re.compile(r"^git~\d+$")  # the NTFS 8.3 short name of .git (CVE-2019-1353)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class Verdict:
    """The guard's answer. `allowed` with `needs_approval` means: only after a person says yes."""

    allowed: bool
    needs_approval: bool
    reason: str
    resolved: Path | None
    code: str

    def to_dict(self) -> dict[str, object]:
        return {
            "allowed": self.allowed,
            "needs_approval": self.needs_approval,
            "code": self.code,
            "reason": self.reason,
            "resolved": str(self.resolved) if self.resolved is not None else None,
        }


class PathRefused(DuckflowError):
    """The guard refused a path; `.verdict` says why."""

    exit_code = 3

    def __init__(self, verdict: Verdict) -> None:
        super().__init__(
            f"refused: {verdict.reason} [{verdict.code}]",
            hint="use a path inside the workspace (relative paths are resolved from its root)",
        )
        self.verdict = verdict


class ApprovalRequired(PathRefused):
    """The path is allowed only with a person's approval (e.g. a dangerous extension)."""

    exit_code = 4

    def __init__(self, verdict: Verdict) -> None:
        DuckflowError.__init__(
            self,
            f"needs approval: {verdict.reason} [{verdict.code}]",
            hint="ask for approval through the gate, then run the tool again with approval",
        )
        self.verdict = verdict


class _Refused(Exception):
    def __init__(self, code: str, reason: str, resolved: Path | None = None) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason
        self.resolved = resolved


@dataclass
class Target:
    """A located path. `dir_fd` is an open descriptor of its parent (None when the parent does
    not exist yet); `name` is the last component ('' for the root); `st` its lstat or None.
    Descriptors are closed when the `locate` block ends."""

    parts: tuple[str, ...]
    lex_parts: tuple[str, ...]
    resolved: Path
    root_fd: int
    dir_fd: int | None
    name: str
    st: os.stat_result | None
    _fds: list[int] = field(default_factory=list, repr=False)

    @property
    def exists(self) -> bool:
        return self.st is not None

    @property
    def rel(self) -> str:
        return "/".join(self.parts) or "."

    @property
    def is_dir(self) -> bool:
        return self.st is not None and stat.S_ISDIR(self.st.st_mode)

    def open_dir(self) -> int:
        """A new descriptor of this directory (opened without following links); caller closes."""
        if not self.parts:
            return os.dup(self.root_fd)
        if self.dir_fd is None:
            raise FileNotFoundError(errno.ENOENT, "no such directory", self.rel)
        return os.open(self.name, _DIR_FLAGS, dir_fd=self.dir_fd)

    def close(self) -> None:
        for f in self._fds:
            try:
                os.close(f)
            except OSError:
                pass
        self._fds.clear()


def _splice(done: list[str], target: str, roots: tuple[str, ...]) -> list[str]:
    """The components (from the root) a symlink in directory `done` pointing to `target` names."""
    if target.startswith("/"):
        rest: str | None = None
        for root in roots:
            if target == root or target.rstrip("/") == root:
                rest = ""
            elif target.startswith(root.rstrip("/") + "/"):
                rest = target[len(root.rstrip("/")) + 1 :]
            if rest is not None:
                break
        if rest is None:
            raise _Refused("symlink_outside", f"a symlink on the path points outside: {target}")
        stack: list[str] = []
        pieces = rest.split("/")
    else:
        stack = list(done)
        pieces = target.split("/")
    for piece in pieces:
        if piece in ("", "."):
            continue
        if piece == "..":
            if not stack:
                raise _Refused("symlink_outside", f"a symlink on the path leads outside: {target}")
            stack.pop()
        else:
            stack.append(piece)
    return stack


class WorkspaceGuard:
    """Resolves paths inside one workspace root and says what a tool may do with them."""

    def __init__(self, root: str | Path, config: WorkspaceConfig | None = None) -> None:
        if config is None:
            from duckflow.config import WorkspaceConfig

            config = WorkspaceConfig()
        self.config = config
        given = os.path.abspath(os.fspath(root))
        self.root = Path(os.path.realpath(given))
        if not self.root.is_dir():
            raise DuckflowError(
                f"workspace root {self.root} is not a directory",
                hint="create it or pass an existing folder with --root/--workspace",
            )
        self._roots = tuple(dict.fromkeys([str(self.root), given]))
        self._kernel_root = _fd_path(self.root)  # how /proc/self/fd spells the root

    # ----------------------------------------------------------------- public API
    def check(self, path: str | os.PathLike[str], op: Op) -> Verdict:
        """Decide about `path` for `op`; never raises for a bad path."""
        try:
            with self.locate(path, op) as target:
                return self._policy(target, op)
        except PathRefused as exc:
            return exc.verdict

    def resolve(self, path: str | os.PathLike[str], op: Op, *, approved: bool = False) -> Path:
        """The absolute path `path` names; raises PathRefused (or ApprovalRequired)."""
        verdict = self.check(path, op)
        if not verdict.allowed:
            raise PathRefused(verdict)
        if verdict.needs_approval and not approved:
            raise ApprovalRequired(verdict)
        assert verdict.resolved is not None
        return verdict.resolved

    @contextmanager
    def locate(
        self,
        path: str | os.PathLike[str],
        op: Op,
        *,
        create_parents: bool = False,
        follow_last: bool | None = None,
        approved: bool = False,
        enforce: bool = False,
    ) -> Iterator[Target]:
        """Walk to `path` and yield a Target whose descriptors stay open inside the block.

        With `enforce`, the policy (protected folders, root, extensions) is applied too and
        ApprovalRequired is raised unless `approved`. Refusals raise PathRefused.
        """
        if op not in OPS:
            raise PathRefused(Verdict(False, False, f"unknown operation '{op}'", None, "bad_op"))
        raw = os.fspath(path)
        if not isinstance(raw, str):
            raise PathRefused(Verdict(False, False, "paths must be text", None, "encoding"))
        lex = split_path(raw, self._roots)
        if isinstance(lex, Refusal):
            raise PathRefused(Verdict(False, False, lex.reason, None, lex.code))
        follow = op != "delete" if follow_last is None else follow_last
        root_fd = os.open(self.root, _DIR_FLAGS)
        target: Target | None = None
        try:
            try:
                if not follow:  # a link we act on must not point outside either
                    self._walk(root_fd, lex, follow=True, create=False).close()
                target = self._walk(root_fd, lex, follow=follow, create=create_parents)
            except OSError as exc:
                raise _Refused("os_error", f"the path could not be checked: {exc.strerror}") from None
            if enforce:
                verdict = self._policy(target, op)
                if not verdict.allowed:
                    raise PathRefused(verdict)
                if verdict.needs_approval and not approved:
                    raise ApprovalRequired(verdict)
            yield target
        except _Refused as exc:
            raise PathRefused(Verdict(False, False, exc.reason, exc.resolved, exc.code)) from None
        finally:
            if target is not None:
                target.close()
            os.close(root_fd)

    # ----------------------------------------------------------------- internals
    def _policy(self, target: Target, op: str) -> Verdict:
        resolved = target.resolved
        if target.st is not None:
            mode = target.st.st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
                return Verdict(False, False, "device files, FIFOs and sockets are refused",
                               resolved, "special_file")
        if op in ("write", "delete"):
            if not target.parts:
                return Verdict(False, False, f"the workspace root itself cannot be {op}d"
                               if op == "delete" else "the workspace root itself cannot be "
                               "written", resolved, "workspace_root")
            for part in target.parts + target.lex_parts:
                key = name_key(part)
                if key in PROTECTED_NAMES or _SHORT_GIT.match(key):
                    return Verdict(False, False, f"'{part}/' is read-only to tools", resolved,
                                   "protected")
        if op == "write" or op == "execute":
            # the name as written AND where it leads: `run.sh -> run.txt` and `run.txt -> run.sh`
            names = dict.fromkeys(n for n in (target.lex_parts[-1:] + target.parts[-1:]) if n)
            ext = next((e for n in names
                        if (e := dangerous_suffix(n, self.config.dangerous_extensions))), None)
            if ext is not None:
                if op == "execute" or self.config.dangerous_extensions_mode == "approve":
                    return Verdict(True, True, f"'{ext}' files need a person's approval to be "
                                   f"{'run' if op == 'execute' else 'written'}", resolved,
                                   "dangerous_extension")
                return Verdict(False, False, f"writing '{ext}' files is refused "
                               "(dangerous_extensions_mode = \"refuse\")", resolved,
                               "dangerous_extension")
        return Verdict(True, False, "inside the workspace", resolved, "ok")

    def _walk(self, root_fd: int, lex: Lexical, *, follow: bool, create: bool) -> Target:
        todo = list(lex.parts)
        done: list[str] = []
        fds: list[int] = []
        fd = root_fd
        hops = 0

        def restart(parts: list[str]) -> None:
            nonlocal fd, hops
            hops += 1
            if hops > MAX_SYMLINK_HOPS:
                raise _Refused("symlink_loop", "too many symlinks on the path (a loop?)")
            for f in fds:
                os.close(f)
            fds.clear()
            fd = root_fd
            done.clear()
            todo[:0] = parts

        try:
            while todo:
                name = todo.pop(0)
                last = not todo
                try:
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                except FileNotFoundError:
                    if last:
                        return self._target(done + [name], root_fd, fd, name, None, fds, lex)
                    if not create:
                        return self._target(done + [name] + todo, root_fd, None, todo[-1], None,
                                            fds, lex)
                    try:
                        os.mkdir(name, 0o777, dir_fd=fd)
                    except FileExistsError:
                        pass
                    todo.insert(0, name)
                    continue
                if stat.S_ISLNK(st.st_mode) and (follow or not last):
                    try:
                        link = os.readlink(name, dir_fd=fd)
                    except OSError as exc:  # changed since the stat: look again
                        if exc.errno not in (errno.ENOENT, errno.EINVAL):
                            raise
                        restart([*done, name])
                        continue
                    restart(_splice(done, link, self._roots))
                    continue
                if last:
                    if lex.want_dir and not stat.S_ISDIR(st.st_mode) and not stat.S_ISLNK(st.st_mode):
                        raise _Refused("not_a_directory", f"'{name}' is not a directory "
                                       "(the path ends with '/')", self.root.joinpath(*done, name))
                    return self._target(done + [name], root_fd, fd, name, st, fds, lex)
                try:
                    nfd = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOENT):  # swapped under us: look again
                        todo.insert(0, name)
                        hops += 1
                        if hops > MAX_SYMLINK_HOPS:
                            raise _Refused("race", "the path kept changing while it was checked") from None
                        continue
                    if exc.errno == errno.ENOTDIR:
                        raise _Refused("not_a_directory", f"'{name}' is not a directory",
                                       self.root.joinpath(*done, name)) from None
                    raise
                fds.append(nfd)
                fd = nfd
                done.append(name)
            return self._target([], root_fd, None, "", os.fstat(root_fd), fds, lex)
        except BaseException:
            for f in fds:
                os.close(f)
            raise

    def _target(self, parts: list[str], root_fd: int, dir_fd: int | None, name: str,
                st: os.stat_result | None, fds: list[int], lex: Lexical) -> Target:
        if dir_fd is not None and dir_fd != root_fd:
            self._still_inside(dir_fd)
        return Target(tuple(parts), lex.parts, self.root.joinpath(*parts), root_fd, dir_fd,
                      name, st, list(fds))

    def _still_inside(self, fd: int) -> None:
        """Defence in depth against a folder moved out of the workspace after it was opened:
        where the kernel says the descriptor now is (Linux /proc; skipped without it)."""
        root = self._kernel_root
        try:
            where = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return
        if root is None:
            return
        if where != root and not where.startswith(root.rstrip("/") + "/"):
            raise _Refused("race", "a folder on the path was moved out of the workspace")


def _fd_path(path: Path) -> str | None:
    try:
        fd = os.open(path, _DIR_FLAGS)
    except OSError:
        return None
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None
    finally:
        os.close(fd)
