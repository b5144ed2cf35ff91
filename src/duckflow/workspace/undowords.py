"""What an undo or a redo did, in words a person reads: per file, created / changed / deleted, said right.

An undo of a change that created a file removes it ("removed hello.py, the file it created"), of
one that changed a file restores it, of one that deleted a file brings it back; a redo says the
same the other way round. Every channel (/undo in the terminal and on the web, `duckflow undo`)
says it with these words.
"""

from __future__ import annotations

from typing import Any

_UNDO = {"removed": "removed {p} (the file it created)", "restored": "restored {p} as it was",
         "recreated": "brought back {p} (it had been deleted)"}
_REDO = {"removed": "deleted {p} again", "restored": "changed {p} again", "recreated": "created {p} again"}


def undo_words(result: Any) -> str:
    """`Undone: removed hello.py (the file it created).` / `Redone: created hello.py again.`"""
    words = _REDO if result.redone else _UNDO
    said = [words.get(what, "restored {p}").format(p=path) for path, what in result.effects]
    if not said:  # (a checkpoint of paths that exist neither before nor after)
        said = [f"nothing left to change in {', '.join(result.restored) or 'the workspace'}"]
    head = "Redone" if result.redone else "Undone"
    left = "".join(f" NOT restored: {path} ({why})." for path, why in getattr(result, "not_restored", ()))
    return f"{head}: {'; '.join(said)}.{left}"
