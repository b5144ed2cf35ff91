"""Ends a `duckflow` process without tearing the interpreter down, once everything is written.

After a command returns, Python's own shutdown waits for non-daemon threads, runs the atexit
handlers, flushes stdout and stderr, and then frees every module and object one by one: about
20 ms of a `duckflow run` (a third of the scripted demo's own work after start-up) and ~25 ms
of a bare `import asyncio, pydantic, rich.console, sqlite3`, measured by timing from the
command's return to the parent seeing the exit. Nothing a person keeps is written in that last
phase: every Duckflow store, trace and log is closed by the command itself (SQLite stores and
the trace by `close_all`, the event log and the audit file per write).

Only the `duckflow` command arms it (`main.console`, the `[project.scripts]` entry, and
`python -m duckflow`); a program that calls `main(argv)` keeps Python's shutdown. `arm()`
registers a handler first, so it runs last of the atexit handlers (they run in reverse order,
after the non-daemon threads were joined); it flushes any logging handler and the standard
streams, then `os._exit(code)` with the command's exit code. It stands aside (normal shutdown)
when no code was recorded (an exception or `SystemExit` left `main`), in a forked child, when a
tracer or profiler is active (coverage writes its data from an atexit handler registered before
ours), or when `DUCKFLOW_NO_FAST_EXIT` is set.
"""

from __future__ import annotations

import atexit
import os
import sys

_code: list[int] = []
_pid: list[int] = []


def arm() -> None:
    """Leave fast at exit with the code `record` was given. Call once, before anything registers
    an atexit handler of its own (first thing in the process's entry point)."""
    if os.environ.get("DUCKFLOW_NO_FAST_EXIT") or "coverage" in sys.modules or _pid:
        return
    _pid.append(os.getpid())
    atexit.register(_leave)


def armed() -> bool:
    """Whether this process is set to leave fast (`arm` was called here and did not stand aside)."""
    return bool(_pid) and _pid[0] == os.getpid()


def record(code: int) -> None:
    """The command's exit code, for the fast exit (the process still ends through sys.exit)."""
    _code[:] = [int(code)]


def _leave() -> None:
    if not _code or os.getpid() != _pid[0] or sys.gettrace() is not None or sys.getprofile() is not None:
        return
    if "logging" in sys.modules:
        import logging

        logging.shutdown()  # its own atexit handler may have been registered before ours
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing left to write there
            pass
    os._exit(_code[0])
