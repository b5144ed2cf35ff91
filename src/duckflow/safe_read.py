"""Reading small files a person or a repository names (config, tables): never hang, never escape.

`read_regular(path)` opens without blocking (a FIFO cannot hang the open), requires a regular
file (not a folder, device such as /dev/zero, FIFO or socket) and reads at most `max_bytes`.
`read_inside(root, rel)` does the same for a file inside a workspace, walking every component
from `root` with O_NOFOLLOW, so no symlink on the way (planted by a cloned repository, say) can
point the read anywhere else. Both raise `UnsafeFile` with a one-line reason.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path, PurePosixPath

MAX_BYTES = 1_000_000


class UnsafeFile(OSError):
    """The file is not something Duckflow will read (the message says why)."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _read_fd(fd: int, where: str, max_bytes: int) -> bytes:
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeFile(f"{where} is {_kind(st.st_mode)}, not a regular file")
    if st.st_size > max_bytes:
        raise UnsafeFile(f"{where} is larger than {max_bytes} bytes")
    os.set_blocking(fd, True)
    chunks: list[bytes] = []
    size = 0
    while size <= max_bytes:
        chunk = os.read(fd, min(65536, max_bytes + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size > max_bytes:
        raise UnsafeFile(f"{where} is larger than {max_bytes} bytes")
    return b"".join(chunks)


def read_regular(path: str | Path, *, max_bytes: int = MAX_BYTES) -> bytes:
    """The bytes of a regular file (links followed); FileNotFoundError when it is missing."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise UnsafeFile(f"{path} is a socket, not a regular file") from None
        raise
    try:
        return _read_fd(fd, str(path), max_bytes)
    finally:
        os.close(fd)


def read_inside(root: str | Path, rel: str | Path, *, max_bytes: int = MAX_BYTES) -> bytes:
    """The bytes of the regular file `root/rel`, no symlink or `..` on the way from `root`."""
    parts = PurePosixPath(rel).parts
    where = str(Path(root) / rel)
    if not parts or PurePosixPath(rel).is_absolute() or ".." in parts:
        raise UnsafeFile(f"{where} is not a plain path inside {root}")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for i, name in enumerate(parts):
            last = i == len(parts) - 1
            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
            flags |= os.O_NONBLOCK if last else os.O_DIRECTORY
            try:
                nxt = os.open(name, flags, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR) or (
                        exc.errno == errno.ENXIO and last):
                    shown = str(Path(root, *parts[: i + 1]))
                    what = "a link" if last else "a link or not a folder"
                    raise UnsafeFile(f"{shown} is {what}; Duckflow does not follow links inside "
                                     "a workspace for this file") from None
                raise
            os.close(fd)
            fd = nxt
        return _read_fd(fd, where, max_bytes)
    finally:
        os.close(fd)


def inside(root: str | Path, path: str | Path) -> Path | None:
    """`path` (relative to `root` when not absolute) resolved, when it stays inside `root`."""
    base = Path(os.path.realpath(root))
    target = Path(os.path.realpath(base / Path(path).expanduser()))
    if target == base or base in target.parents:
        return target
    return None
