"""The task's tests stay as they were, by effect: each is kept before an action and put back after any action that changed it.

A write of a task's test is refused before it runs (checks.refused_test_write), but a command
can change a file by any of a thousand spellings (`sed -i`, `echo >`, `mv`, `rm`, `cp other
x_test.py`, `python -c "open(...)"`, `git checkout`), so the command's text is never the guard.
Before every action that is not a read, `snapshot` keeps the bytes and mode of each protected
test (expect.protected: the tests that are the task's expectation); after it, `restore` compares
and puts back every one that changed or vanished — boxed or not, auto-approved or approved by
a person (the person approved a command, and was never told it changes the task's tests: a
person who wants them changed says so in the task, or edits them). The restore comes right
after the action, so the next action, a check included, runs against the tests as they were
(and nothing a command started outlives it to change them later: workspace/reaper.py).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

MAX_BYTES = 4 << 20  # a test file larger than this is not kept (nor guarded): no task test is that big


@dataclass(frozen=True)
class Kept:
    """One protected test as it was before the action."""

    data: bytes
    mode: int
    digest: str


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read(path: Path) -> tuple[bytes, int] | None:
    """A regular file's bytes and mode, never through a link (None: missing, a link, not a file, too big)."""
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES:
            return None
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        return f.read(MAX_BYTES + 1), stat.S_IMODE(st.st_mode)


def snapshot(root: Path, paths: set[str] | frozenset[str]) -> dict[str, Kept]:
    """The protected tests as they are now (workspace-relative paths; a path with `..` is left out)."""
    kept: dict[str, Kept] = {}
    for rel in sorted(paths):
        if rel.startswith("/") or ".." in rel.split("/"):
            continue
        got = _read(root / rel)
        if got is not None and len(got[0]) <= MAX_BYTES:
            kept[rel] = Kept(got[0], got[1], _digest(got[0]))
    return kept


def changed(root: Path, kept: dict[str, Kept]) -> list[str]:
    """The kept tests that are not as they were: changed, removed, replaced by a link or a folder, re-moded."""
    out = []
    for rel, k in kept.items():
        got = _read(root / rel)
        if got is None or got[1] != k.mode or _digest(got[0]) != k.digest:
            out.append(rel)
    return out


def restore(root: Path, kept: dict[str, Kept]) -> tuple[list[str], list[str]]:
    """Put back every kept test that changed (its folders made again if they went): (the paths put
    back, `path (why)` of those that could not be — a folder the command made read-only)."""
    back, lost = [], []
    for rel in changed(root, kept):
        try:
            _put_back(root, rel, kept[rel])
            back.append(rel)
        except OSError as exc:
            lost.append(f"{rel} ({exc.strerror or type(exc).__name__})")
    return back, lost


def _put_back(root: Path, rel: str, k: Kept) -> None:
    path = root / rel
    parent = _folders(root, rel)
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)  # a folder where the test was
    tmp = parent / f".{path.name}.duckflow-restore"
    tmp.write_bytes(k.data)
    os.chmod(tmp, k.mode)
    os.replace(tmp, path)


def _folders(root: Path, rel: str) -> Path:
    """The test's folder made again inside the workspace, each part a real folder (a link or a
    file the command put where a folder was is removed first: nothing is written through it)."""
    here = root
    for part in rel.split("/")[:-1]:
        here = here / part
        if here.is_symlink() or (here.exists() and not here.is_dir()):
            here.unlink()
        if not here.exists():
            here.mkdir()
    return here


def said_to_model(paths: list[str], code: list[str], *, reached: bool = True, lost: bool = False) -> str:
    """What the model reads in its next prompt: the tests are not its to change (asked again)."""
    names = ", ".join(paths[:3])
    how = ("it could not all be put back; the person is told" if lost else
           "it was put back as it was" if reached else "that change was not kept")
    to = " or ".join(code[:2]) or "the code"
    return (f"NOT KEPT: this changed {names}, the task's tests; {how}. The tests say what the result must "
            f"do and are not yours to change, by any command. Change {to} so that they pass.")


def said_to_person(paths: list[str], *, reached: bool = True, lost: list[str] | None = None) -> str:
    """One line for the person (true of the effect: what could not be put back is said so)."""
    names = ", ".join(paths[:3])
    if lost:
        return (f"Could not put back {', '.join(lost[:3])}: a command changed the task's tests, which the model "
                "may not change. Put them back by hand." + (f" (Put back: {names}.)" if paths else ""))
    if reached:
        return f"Put back {names} as it was: a command changed the task's tests, which the model may not change."
    return f"Not kept: a command changed {names}, the task's tests, which the model may not change."
