"""The line that ends a cancelled turn (Ctrl-C, Esc, the web page's Stop), true of what it changed.

Every channel says the same: "Cancelled — nothing was changed." when the checkpoints since the
turn began hold no change, else "Cancelled — 2 files changed so far (hello.py, util.py); /undo
takes them back." (with "/undo 2 times" when the turn made two checkpoints: each /undo takes
one). A command the turn ran is said too: what it did is not in the checkpoints. `undo` names
the way back the channel has (`/undo` in a chat, `duckflow undo` after `duckflow run`).
"""

from __future__ import annotations

from typing import Any

from duckflow.workspace.turnchanges import Changed, TurnChanges


def cancelled_line(changed: Changed, *, undo: str = "/undo") -> str:
    ran = ""
    if changed.commands:
        n = len(changed.commands)
        ran = (f" It ran {'a command' if n == 1 else f'{n} commands'} before that; "
               "what a command changed is not counted here.")
    if not changed.paths:
        return ("Cancelled — no file was changed by its edits." if ran else "Cancelled — nothing was changed.") + ran
    n = len(changed.paths)
    shown = ", ".join(changed.paths[:3]) + (", …" if n > 3 else "")
    what = "1 file" if n == 1 else f"{n} files"
    times = "" if changed.undos == 1 else f" {changed.undos} times"
    them = "it" if n == 1 else "them"
    return f"Cancelled — {what} changed so far ({shown}); {undo}{times} to take {them} back.{ran}"


def watch_chunk(turn: TurnChanges | None, chunk: Any) -> None:
    """Feed a turn's chunk to its account: a command's result says it ran (a core Chunk or its dict)."""
    if turn is None:
        return
    kind = chunk.get("type") if isinstance(chunk, dict) else getattr(chunk, "type", "")
    if kind != "tool_response":
        return
    data = (chunk.get("data") or {}) if isinstance(chunk, dict) else chunk.data.model_dump()
    said = str(data.get("content", "")).lstrip().lower()
    if not said.startswith(NOT_RUN):
        turn.saw(str(data.get("name", "")))


NOT_RUN = ("denied", "refused", "not run", "proposed", "blocked")  # a result that says the command never ran
