"""The supervisor a shell command runs under: a hard deadline, and nothing it started survives.

Run as a script (`python -I reaper.py RESULT_FD TIMEOUT_S -- ARGV...`), standard library only,
so it starts fast and imports nothing from the environment it was given. It makes itself a
child subreaper (Linux `PR_SET_CHILD_SUBREAPER`), so every process the command starts stays in
its tree even after `setsid`, a double fork or its parent exiting. It starts the command in a
new session, waits until the command exits or the deadline passes, then kills every
descendant still alive (walking /proc, repeating until none is left) and writes one JSON line
to RESULT_FD: {"exit_code", "timed_out", "killed": [{"pid", "cmd"}]}.
If Duckflow dies, the supervisor gets SIGTERM (`PR_SET_PDEATHSIG`) and cleans up the same way.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def _prctl(option: int, value: int) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _table() -> dict[int, tuple[int, str, str]]:
    """pid -> (parent pid, state, command name) for every process we can see."""
    out: dict[int, tuple[int, str, str]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                raw = fh.read().decode("utf-8", "replace")
        except OSError:
            continue
        head, _, rest = raw.rpartition(")")
        fields = rest.split()
        if len(fields) < 2:
            continue
        out[int(name)] = (int(fields[1]), fields[0], head.partition("(")[2])
    return out


def descendants(root: int) -> dict[int, tuple[str, str]]:
    """Live descendants of `root`: pid -> (state, command name)."""
    table = _table()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: dict[int, tuple[str, str]] = {}
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        if pid in found:
            continue
        found[pid] = table[pid][1:]
        todo.extend(children.get(pid, []))
    return found


def _cmdline(pid: int, name: str) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            text = fh.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        text = ""
    return (text or name)[:200]


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_all(me: int) -> list[dict[str, object]]:
    """SIGKILL every descendant of `me` until none is left; what was alive when killed."""
    killed: dict[int, str] = {}
    for _ in range(200):
        alive = {p: v for p, v in descendants(me).items() if v[0] not in ("Z", "X")}
        if not alive:
            _reap()
            if not {p for p, v in descendants(me).items() if v[0] not in ("Z", "X")}:
                break
            continue
        for pid, (_, name) in alive.items():
            killed.setdefault(pid, _cmdline(pid, name))
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.005)
        _reap()
    _reap()
    return [{"pid": pid, "cmd": cmd} for pid, cmd in sorted(killed.items())]


def main(argv: list[str]) -> int:
    result_fd, timeout_s = int(argv[0]), float(argv[1])
    command = argv[3:] if argv[2:3] == ["--"] else argv[2:]
    deadline = time.monotonic() + timeout_s
    me = os.getpid()
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    stop = {"now": False}

    def on_term(signum: int, frame: object) -> None:
        stop["now"] = True

    signal.signal(signal.SIGTERM, on_term)
    if os.getppid() == 1:  # Duckflow already gone before PDEATHSIG was set
        return 1
    result: dict[str, object] = {"exit_code": None, "timed_out": False, "killed": [],
                                 "error": None}
    try:
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, start_new_session=True,
                                close_fds=True)
    except OSError as exc:
        result["error"] = f"{exc.strerror or exc}"
        _write(result_fd, result)
        return 0
    while not stop["now"]:
        pid, status = os.waitpid(proc.pid, os.WNOHANG)
        if pid:
            result["exit_code"] = os.waitstatus_to_exitcode(status)
            break
        if time.monotonic() >= deadline:
            result["timed_out"] = True
            break
        time.sleep(0.01)
    result["killed"] = kill_all(me)
    _write(result_fd, result)
    return 0


def _write(fd: int, result: dict[str, object]) -> None:
    try:
        os.write(fd, (json.dumps(result) + "\n").encode())
        os.close(fd)
    except OSError:
        pass


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
