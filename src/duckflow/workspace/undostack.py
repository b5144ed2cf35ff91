"""Undo back to a change, redo up to one, and what each would take with it: the stack, walked from a change.

The checkpoints' undo is a stack (checkpoints.py): `undo()` takes back the newest change not
undone, `redo()` brings back what the last undo took, as long as nothing changed since. A change
further back is reached through the stack, never on its own: `undo_to(cps, N)` undoes the newest
changes one by one until #N is undone (the later ones go with it, as they were made on top of it),
`redo_to(cps, N)` redoes until #N is back. `stack(cps)` says for each change what an undo or a
redo of it would take along (`undo_with`, `redo_with`) and whether it can be redone, so a page can
ask before it acts and show only buttons that work.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from duckflow.workspace.undocheck import CheckpointError

NOT_CHANGES = ("undo", "effects-check")  # the store's own saves: never a change a person undoes
MAX_STEPS = 200


@dataclass(frozen=True)
class StackEntry:
    id: int
    tool: str
    summary: str
    paths: tuple[str, ...]
    undone: bool
    redoable: bool  # undone, and `redo_to` can bring it back (no change was made after its undo)
    undo_with: tuple[int, ...]  # the later changes an undo back to it takes back too
    redo_with: tuple[int, ...]  # the changes a redo up to it brings back first


def _redo_chain(cps: Any) -> list[tuple[int, int]]:
    """(saved, target) of the undos a redo can still take back, in the order `redo()` takes them."""
    rows = cps._db.execute(
        "SELECT u.saved, u.target FROM undos u JOIN checkpoints s ON s.id = u.saved "
        "JOIN checkpoints t ON t.id = u.target WHERE s.undone = 0 AND t.undone = 1 "
        "AND NOT EXISTS (SELECT 1 FROM checkpoints c WHERE c.id > u.saved AND c.tool != 'undo') "
        "ORDER BY u.saved DESC").fetchall()
    return [(int(r["saved"]), int(r["target"])) for r in rows]


def stack(cps: Any, limit: int = 200) -> list[StackEntry]:
    """The newest `limit` changes (newest first) with what undoing or redoing each would take along."""
    infos = [c for c in cps.list(limit) if c.tool not in NOT_CHANGES]
    live = [c.id for c in infos if not c.undone]
    chain = _redo_chain(cps)
    order = [target for _, target in chain]
    out = []
    for c in infos:
        redoable = c.undone and c.id in order
        out.append(StackEntry(
            c.id, c.tool, c.summary, c.paths, c.undone, redoable,
            tuple(i for i in live if i > c.id) if not c.undone else (),
            tuple(order[:order.index(c.id)]) if redoable else ()))
    return out


def undo_to(cps: Any, cid: int) -> list[Any]:
    """Undo the newest changes one by one until #cid is undone; the UndoResults, in order."""
    info = cps.get(cid)
    if info.tool in NOT_CHANGES:
        raise CheckpointError(f"#{cid} is not a change Duckflow made", hint="/undo takes back the last change")
    if info.undone:
        raise CheckpointError(f"change #{cid} is undone already", hint=f"/redo #{cid} brings it back")
    done: list[Any] = []
    for _ in range(MAX_STEPS):
        result = cps.undo(None)
        done.append(result)
        if result.undone_id <= cid:
            break
    return done


def redo_to(cps: Any, cid: int) -> list[Any]:
    """Redo until #cid is back (the changes undone after it come back first); the UndoResults."""
    info = cps.get(cid)
    if not info.undone:
        raise CheckpointError(f"change #{cid} is not undone", hint=f"/undo #{cid} takes it back")
    if cid not in [target for _, target in _redo_chain(cps)]:
        raise CheckpointError(f"change #{cid} cannot be redone: something changed after it was undone",
                              hint="ask for the change again")
    done: list[Any] = []
    for _ in range(MAX_STEPS):
        result = cps.redo()
        done.append(result)
        if result.undone_id == cid:
            break
    return done
