"""`/undo #N` and `/redo #N` (the web page's row buttons, and typed anywhere): back to a change through the undo
stack, the later changes with it; up to one again; what each would take along (GET /v1/undo); refusals in words."""

from __future__ import annotations

from pathlib import Path

from duckflow.channels.commands import Changes, answer_command, command_arg
from duckflow.companion.state import AgentState
from duckflow.workspace.checkpoints import Checkpoints
from duckflow.workspace.undostack import stack


def _write(cps: Checkpoints, root: Path, name: str, text: str) -> int:
    cid = cps.record("write_file", [name], f"write_file {name}")
    (root / name).write_text(text)
    return cid


def _ask(root: Path, text: str) -> tuple[str, bool]:
    word = text.split()[0][1:]
    said = answer_command(word, AgentState("s"), changes=Changes(root), model="m", channel="http", arg=command_arg(text))
    return said.text, said.ok


def test_undo_back_to_a_change_takes_the_later_ones_and_redo_brings_them_back(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    cps = Checkpoints(root)
    a = _write(cps, root, "a.py", "a\n")
    b = _write(cps, root, "b.py", "b\n")
    c = _write(cps, root, "a.py", "a2\n")
    walk = {e.id: e for e in stack(cps)}
    assert walk[a].undo_with == (c, b) and walk[c].undo_with == () and not walk[a].redoable
    cps.close()

    said, ok = _ask(root, f"/undo #{a}")
    assert ok and said.startswith("Undone 3 changes, newest first: restored a.py as it was; removed b.py")
    assert said.endswith(f"/redo #{a} brings them back.")
    assert not (root / "a.py").exists() and not (root / "b.py").exists()
    cps = Checkpoints(root)
    walk = {e.id: e for e in stack(cps)}
    assert all(walk[i].undone and walk[i].redoable for i in (a, b, c))
    assert walk[c].redo_with == (a, b) and walk[a].redo_with == ()  # a redo goes back the way the undos came
    cps.close()

    said, ok = _ask(root, f"/redo #{b}")
    assert ok and said.startswith("Redone 2 changes:") and (root / "a.py").read_text() == "a\n"
    assert (root / "b.py").read_text() == "b\n"
    said, ok = _ask(root, f"/redo #{a}")
    assert not ok and f"change #{a} is not undone" in said  # back already: refused, nothing touched
    assert (root / "b.py").exists()

    said, ok = _ask(root, "/undo #x")
    assert not ok and "takes a change's number" in said
    _ask(root, f"/undo #{b}")  # b (and nothing later: a is back, c still undone)
    cps = Checkpoints(root)
    _write(cps, root, "d.py", "d\n")  # a new change after the undo: b and c can no longer be redone
    walk = {e.id: e for e in stack(cps)}
    assert walk[b].undone and not walk[b].redoable and not walk[c].redoable
    cps.close()
    said, ok = _ask(root, f"/redo #{b}")
    assert not ok and "cannot be redone: something changed after it was undone" in said
