"""The Landlock box (Linux 6.7+, ABI 4+) for machines where user namespaces are off: run with `python -I -S landlock.py SPEC -- argv`.

The kernel's Landlock LSM restricts a process and everything it starts, without privileges and
without namespaces (facts from the kernel's documentation, Documentation/userspace-api/landlock.rst,
and <linux/landlock.h>: the three system calls 444-446, the access bits, the structures).
The ruleset handles every file access and TCP bind/connect:
- read and execute only beneath the system folders, the workspace and the `read` paths;
- write (create, change, remove, rename) only beneath the `write` paths — a throwaway HOME,
  TMPDIR and bytecode cache — and the workspace files in `files` (the ones the approval
  covers, write and truncate only); the rest of the workspace and the host are read-only;
- no TCP at all (no rule grants a port); from ABI 6 also no abstract unix socket or signal
  outside the box.
Not covered by Landlock (docs/security.md): UDP and unix sockets by path, and new files in
the workspace (Landlock has no copy-on-write: a script cannot write a new report there).
This file runs on its own before the command (it imports nothing from Duckflow).
"""

from __future__ import annotations

import ctypes
import json
import os
import sys

_CREATE, _ADD_RULE, _RESTRICT = 444, 445, 446  # the same numbers on every architecture
_VERSION = 1  # LANDLOCK_CREATE_RULESET_VERSION
_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR, MAKE_REG = 1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 8
MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM, REFER, TRUNCATE = (1 << 9, 1 << 10, 1 << 11,
                                                             1 << 12, 1 << 13, 1 << 14)
IOCTL_DEV = 1 << 15
READ = EXECUTE | READ_FILE | READ_DIR
WRITE = (WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG | MAKE_SOCK
         | MAKE_FIFO | MAKE_BLOCK | MAKE_SYM | REFER | TRUNCATE)
FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # what a rule on a file may hold
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX, SCOPE_SIGNAL = 1 << 0, 1 << 1
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/proc",
          "/dev", "/sys", "/opt")


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def abi() -> int:
    """The Landlock ABI version this kernel offers (0: none)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        got = int(_libc().syscall(_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(_VERSION)))
    except (OSError, AttributeError):
        return 0
    return max(got, 0)


def usable() -> bool:
    """True when the kernel's Landlock can hold the box (ABI 4: TCP rules)."""
    return abi() >= 4


def spec(root: str, *, write: list[str], files: list[str], read: list[str]) -> str:
    """The box's rules as the helper's argument (JSON)."""
    return json.dumps({"root": root, "write": write, "files": files, "read": read})


def restrict(rules: dict[str, object]) -> None:
    """Confine this process (and what it executes) to `rules`; raises OSError when it cannot."""
    version = abi()
    if version < 4:
        raise OSError(0, "Landlock ABI 4 (Linux 6.7) is needed")
    libc = _libc()
    fs = READ | WRITE | (IOCTL_DEV if version >= 5 else 0)
    attr = _RulesetAttr(fs, NET_BIND_TCP | NET_CONNECT_TCP,
                        (SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL) if version >= 6 else 0)
    size = ctypes.sizeof(_RulesetAttr) if version >= 6 else 16
    ruleset = int(libc.syscall(_CREATE, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        def allow(path: str, access: int) -> None:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                return  # not on this machine
            try:
                if not os.path.isdir(path):
                    access &= FILE_ONLY
                rule = _PathBeneath(access & fs, fd)
                if libc.syscall(_ADD_RULE, ruleset, _PATH_BENEATH, ctypes.byref(rule), 0) != 0:
                    raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
            finally:
                os.close(fd)

        for path in (*SYSTEM, str(rules["root"]), *list(rules.get("read") or [])):  # type: ignore[call-overload]
            allow(path, READ | (IOCTL_DEV if path == "/dev" else 0))
        allow("/dev/null", READ | WRITE_FILE | TRUNCATE)
        for path in list(rules.get("write") or []):  # type: ignore[call-overload]
            allow(path, READ | WRITE)
        for path in list(rules.get("files") or []):  # type: ignore[call-overload]
            if os.path.isfile(path) and not os.path.islink(path):
                allow(path, READ_FILE | WRITE_FILE | TRUNCATE)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if libc.syscall(_RESTRICT, ruleset, 0) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)


def main(argv: list[str]) -> int:
    """`landlock.py SPEC -- PROGRAM ARGS...`: confine, then become the program."""
    if len(argv) < 3 or argv[1] != "--":
        print("usage: landlock.py SPEC -- PROGRAM [ARGS...]", file=sys.stderr)
        return 2
    try:
        restrict(json.loads(argv[0]))
    except (OSError, ValueError) as exc:
        print(f"duckflow box: Landlock could not confine the command: {exc}", file=sys.stderr)
        return 126
    try:
        os.execvp(argv[2], argv[2:])
    except OSError as exc:
        print(f"duckflow box: cannot run {argv[2]}: {exc.strerror}", file=sys.stderr)
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
