"""Low-level file operations relative to directory descriptors: atomic writes, reads, trees.

Every function takes an open directory descriptor and a single name inside it, and never
follows a symlink at that name (O_NOFOLLOW), so what the guard located is what is touched.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import stat
from collections.abc import Iterator
from dataclasses import dataclass

_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
TEMP_PREFIX = ".duckflow-tmp-"


class NotRegularFile(OSError):
    """The name is not a regular file (a directory, link, device, FIFO or socket)."""


def read_bytes(dir_fd: int, name: str, limit: int | None = None) -> bytes:
    """Read a regular file; raises NotRegularFile, or ValueError when it is over `limit`."""
    fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(errno.EINVAL, f"'{name}' is not a regular file")
        if limit is not None and st.st_size > limit:
            raise ValueError(f"'{name}' is {st.st_size} bytes; the limit is {limit}")
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if limit is not None and total > limit:
                raise ValueError(f"'{name}' grew over the limit of {limit} bytes while read")
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def atomic_write(dir_fd: int, name: str, data: bytes, mode: int | None = None, *,
                 durable: bool = True) -> None:
    """Write `data` to `name`: temp file in the same directory, fsync, rename over, fsync dir.

    The mode of an existing file is kept; a new file gets `mode` or 0o644. A crash leaves
    either the old content or the new one (plus, at worst, a stray temp file). `durable=False`
    skips both fsyncs (content-addressed copies checked by hash when read back).
    """
    if mode is None:
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            mode = stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else 0o644
        except FileNotFoundError:
            mode = 0o644
    tmp = f"{TEMP_PREFIX}{secrets.token_hex(6)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600, dir_fd=dir_fd)
    try:
        try:
            view = memoryview(data)
            while view:
                n = os.write(fd, view)
                view = view[n:]
            os.fchmod(fd, mode)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except OSError:
            pass
        raise
    if durable:
        os.fsync(dir_fd)


def remove(dir_fd: int, name: str) -> None:
    """Remove a file, link or whole directory tree at `name` without following links."""
    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(name, dir_fd=dir_fd)
    else:
        os.unlink(name, dir_fd=dir_fd)


@dataclass(frozen=True)
class Entry:
    """One node of a snapshot: path relative to the snapshot's start, kind, mode, content."""

    rel: str
    kind: str  # "file" | "dir" | "link"
    mode: int
    data: bytes = b""
    link: str = ""


def snapshot(dir_fd: int, name: str, max_bytes: int) -> Iterator[Entry]:
    """Yield `name` and, for a directory, everything below it (links are not followed).

    Raises ValueError when the files hold more than `max_bytes` in total.
    """
    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    if stat.S_ISLNK(st.st_mode):
        yield Entry(name, "link", 0, link=os.readlink(name, dir_fd=dir_fd))
        return
    if stat.S_ISREG(st.st_mode):
        if st.st_size > max_bytes:
            raise ValueError(f"'{name}' is too large to checkpoint ({st.st_size} bytes)")
        yield Entry(name, "file", stat.S_IMODE(st.st_mode), read_bytes(dir_fd, name))
        return
    if not stat.S_ISDIR(st.st_mode):
        raise NotRegularFile(errno.EINVAL, f"'{name}' is a special file")
    yield Entry(name, "dir", stat.S_IMODE(st.st_mode))
    total = 0
    for top, dirs, files, fd in os.fwalk(name, dir_fd=dir_fd, follow_symlinks=False):
        for d in dirs:
            dst = os.stat(d, dir_fd=fd, follow_symlinks=False)
            rel = f"{top}/{d}"
            if stat.S_ISLNK(dst.st_mode):
                yield Entry(rel, "link", 0, link=os.readlink(d, dir_fd=fd))
            else:
                yield Entry(rel, "dir", stat.S_IMODE(dst.st_mode))
        for f in files:
            fst = os.stat(f, dir_fd=fd, follow_symlinks=False)
            rel = f"{top}/{f}"
            if stat.S_ISLNK(fst.st_mode):
                yield Entry(rel, "link", 0, link=os.readlink(f, dir_fd=fd))
            elif stat.S_ISREG(fst.st_mode):
                total += fst.st_size
                if total > max_bytes:
                    raise ValueError(f"'{name}' holds more than {max_bytes} bytes to checkpoint")
                yield Entry(rel, "file", stat.S_IMODE(fst.st_mode), read_bytes(fd, f))
            # special files inside a tree are skipped: they cannot be restored meaningfully


def walk_parent(root_fd: int, parts: list[str], *, create: bool) -> int:
    """Open (optionally creating) the directory `parts` below `root_fd`, never following links.

    Only for Duckflow's own bookkeeping of already-guarded paths; raises OSError on a link.
    """
    fd = os.dup(root_fd)
    try:
        for part in parts:
            if create:
                try:
                    os.mkdir(part, 0o755, dir_fd=fd)
                except FileExistsError:
                    pass
            nfd = os.open(part, DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = nfd
        return fd
    except BaseException:
        os.close(fd)
        raise
