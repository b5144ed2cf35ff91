"""The garbage collector during a command's start-up: paused while modules load, then frozen.

Start-up creates ~50,000 objects that live as long as the process (modules, classes, pydantic
schemas, compiled templates) and almost no garbage cycles; the collector would walk them again
and again while they are made (a `duckflow run` spent ~15% of its CPU time there). So it is
paused from the `duckflow` command's first line (`main.console`) until the command is set up,
and what exists then is moved to the permanent generation (`gc.freeze()`): later collections
look only at what the command itself allocates, and the youngest generation is collected every
10,000 allocations instead of 700, as the server does (`channels/http/app.py`). Paused only
from inside `run()`, a scripted `duckflow run` still made ~26 collections while its command
module and rich loaded.
"""

from __future__ import annotations

import gc
from collections.abc import Callable

_current: list[Callable[[], None]] = []  # the pause in force, if any


def pause_for_startup() -> Callable[[], None]:
    """Stop collecting now (or keep the pause already in force); the returned `started()`
    freezes what exists and collects again (calling it twice does nothing more)."""
    if _current:
        return _current[0]
    was_enabled = gc.isenabled()
    gc.disable()
    done = False

    def started() -> None:
        nonlocal done
        if done:
            return
        done = True
        _current.clear()
        gc.freeze()
        gc.set_threshold(10_000, 50, 200)
        if was_enabled:
            gc.enable()

    _current.append(started)
    return started


def resume() -> None:
    """End the pause in force, if any (a command that does not resume it itself)."""
    if _current:
        _current[0]()
