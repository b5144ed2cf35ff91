"""The garbage collector during a command's start-up: paused while modules load, then frozen.

Start-up creates ~50,000 objects that live as long as the process (modules, classes, pydantic
schemas, compiled templates) and almost no garbage cycles; the collector would walk them again
and again while they are made (a `duckflow run` spent ~15% of its CPU time there). So it is
paused until the command is set up, and what exists then is moved to the permanent generation
(`gc.freeze()`): later collections look only at what the conversation itself allocates.
"""

from __future__ import annotations

import gc
from collections.abc import Callable


def pause_for_startup() -> Callable[[], None]:
    """Stop collecting now; the returned `started()` freezes what exists and collects again
    (call it once the command is set up; calling it twice does nothing more)."""
    was_enabled = gc.isenabled()
    gc.disable()
    done = False

    def started() -> None:
        nonlocal done
        if done:
            return
        done = True
        gc.freeze()
        if was_enabled:
            gc.enable()

    return started
