"""Where an adaptive sync tool runs: a worker thread until proven fast, then the loop's thread.

A sync tool (`Tool.blocking` None) starts in a worker thread. Its own run time is measured
there (not the hop); after `INLINE_AFTER` threaded calls in a row under `INLINE_LIMIT_S`, in
which the thread never blocked (it computed, it did not wait), it runs on the event loop's
thread. An inline call over the limit sends it back to a thread for good, unless the time over
was the operating system's: the thread was preempted (no voluntary context switch, so it did
not block; CPU time under the limit). Without that
exception a 5 µs function on a busy machine was sent back within seconds (measured: after
~10,000 calls with 5 busy processes on 2 cores), for a pause it did not cause.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger("duckflow.core.tools")

#: a sync tool whose own run time stayed under this on its last `INLINE_AFTER` calls in a
#: worker thread runs on the event loop's thread; an inline call over it sends it back
INLINE_LIMIT_S = 0.001
INLINE_AFTER = 3

#: whether proven-fast sync tools may move to the loop's thread in this process. A model chooses
#: a tool's arguments: a tool fast on its first calls can be slow on the next (a pattern it
#: matches, a bound it loops to), and on the loop's thread that one call holds everything the
#: loop serves. `duckflow serve` turns this off (every session of a server shares one loop);
#: `DUCKFLOW_INLINE_SYNC_TOOLS=0` turns it off anywhere. `@tool(blocking=False)` still runs inline.
inline_allowed = os.environ.get("DUCKFLOW_INLINE_SYNC_TOOLS", "1").strip().lower() not in ("0", "false", "no", "off")

Usage = tuple[float, int]  # (the thread's CPU time in s, its voluntary context switches so far)
_usage: Callable[[], Usage | None] | None = None


def thread_usage() -> Usage | None:
    """This thread's CPU time and voluntary context switches; None where the OS cannot say."""
    global _usage
    if _usage is None:
        _usage = _usage_reader()
    return _usage()


def used_since(before: Usage | None) -> tuple[float, bool] | None:
    """(CPU seconds, whether the thread blocked) since `before` (`thread_usage()`), or None
    where the OS cannot say."""
    after = thread_usage() if before is not None else None
    if before is None or after is None:
        return None
    return after[0] - before[0], after[1] > before[1]


def _usage_reader() -> Callable[[], Usage | None]:
    try:
        import resource

        who = resource.RUSAGE_THREAD  # Linux
        resource.getrusage(who)
    except (ImportError, AttributeError, OSError):
        return lambda: None
    getrusage, thread_time = resource.getrusage, time.thread_time
    return lambda: (thread_time(), getrusage(who).ru_nvcsw)


class Pace:
    """One tool's place: its fast threaded calls in a row, whether it runs inline, demoted.

    Written from worker threads and the loop's thread without a lock: a lost update only
    delays a promotion by a call (the GIL keeps each assignment whole).
    """

    __slots__ = ("demoted", "fast", "inline")

    def __init__(self) -> None:
        self.fast = 0
        self.inline = False
        self.demoted = False

    def threaded(self, took: float, waited: bool = False) -> None:
        """Count one call run in a worker thread that took `took` seconds of its own; `waited`:
        the thread blocked during it (a lock, I/O, another thread, the event loop)."""
        if took > INLINE_LIMIT_S or waited:
            self.fast = 0
            return
        self.fast += 1
        if self.fast >= INLINE_AFTER and not self.demoted and inline_allowed:
            self.inline = True

    def inline_call(self, name: str, took: float, before: Usage | None) -> None:
        """After an inline call that took `took` seconds (wall): over the limit, maybe demote.

        `before` is `thread_usage()` from just before the call.
        """
        if took <= INLINE_LIMIT_S:
            return
        used = used_since(before)
        if used is not None:
            cpu, blocked = used
            if not blocked and cpu <= INLINE_LIMIT_S:
                log.debug("tool %s took %.2f ms on the event loop's thread, %.2f ms of it its own "
                          "CPU time and never blocking: the thread was preempted; it stays there",
                          name, took * 1000, cpu * 1000)
                return
        self.inline, self.demoted = False, True
        log.debug("tool %s took %.2f ms on the event loop's thread (limit %.1f ms): it runs in a "
                  "worker thread from now on", name, took * 1000, INLINE_LIMIT_S * 1000)


def timed(pace: Pace, run: Callable[..., Any], fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """In the worker thread: `run(fn, **kwargs)`, its own time (not the hop) counted in `pace`.

    A call during which the thread blocked (a voluntary context switch) does not count as fast,
    however short: the tool waited for something, and on the loop's thread it could wait for the
    loop itself. A sync tool that hands a coroutine to the app's loop and waits for it
    (`asyncio.run_coroutine_threadsafe(coro, loop).result()`) returns within microseconds from a
    worker thread, and would hang for ever on the loop's thread, which then never runs it.
    """
    before = thread_usage()
    started = time.perf_counter()
    try:
        return run(fn, **kwargs)
    finally:
        took = time.perf_counter() - started
        used = used_since(before)
        pace.threaded(took, waited=used is not None and used[1])
