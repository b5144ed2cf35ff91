"""The single-call step's examples: their templates, which edit example a step shows, and whether a reply copied one.

A small model copies the example's shape, so the step shows the edit example that matches the
task's wording, `add` (a new function at the end) or `fix` (lines replaced) —
companion/singlecall.py picks it at the task's first step and keeps it —, and a reply that copies
an example (its file, its functions, its lines) is not run.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from duckflow.llm.types import ToolCall

DATA = Path(__file__).parent / "data" / "singlecall"
EXAMPLE_MARKERS = ("zeta_demo", "zeta_number")  # names only the examples use
COPIED = "Your reply copied the example's file or code (zeta_demo). Write the code THIS task needs, in its own files."

ADDS = re.compile(r"\b(add|append|insert|extend)\b|追加", re.I)
# adding an option or an argument changes the code that reads them: the edit replaces lines
FLAG = re.compile(r"(?<![\w-])--?[a-z][\w-]*", re.I)
OPTION = re.compile(r"\b(option|flag|argument|parameter)s?\b|オプション|引数", re.I)
NEW_DEF = re.compile(r"\b(function|class|method|test|def)\b|関数|クラス|テスト", re.I)
# a task about code that is wrong replaces lines, whatever else it names ("so that add returns the sum")
FIXES = re.compile(r"\b(fix|bug|buggy|wrong|broken|incorrect|repair)\b|修正|バグ|直し", re.I)


def edit_kind(task: str) -> str:
    """Which edit example a step shows: `add` (a new function at the end: empty SEARCH) or
    `fix` (replace the lines that change) — a command-line option added is a change of the code, and
    so is a fix of wrong code, even when a name in it reads as a verb (a function called `add`)."""
    if not ADDS.search(task) or FLAG.search(task) or FIXES.search(task):
        return "fix"
    return "add" if NEW_DEF.search(task) or not OPTION.search(task) else "fix"


@functools.lru_cache(maxsize=2)
def edit_templates(kind: str) -> tuple[str, str]:
    """(example task, example reply) of an edit with one hunk: `add` appends (empty SEARCH),
    `fix` replaces lines. A small model copies the example's shape, so the step shows the one
    that matches the task's wording."""
    return tuple((DATA / n).read_text(encoding="utf-8").strip() for n in  # type: ignore[return-value]
                 (f"example_{kind}_task.txt", f"example_{kind}_reply.txt"))


@functools.lru_cache(maxsize=1)
def templates() -> tuple[str, str, str]:
    """(system, example task, example reply) from the template files."""
    return tuple((DATA / n).read_text(encoding="utf-8").strip() for n in  # type: ignore[return-value]
                 ("system.txt", "example_task.txt", "example_reply.txt"))


def copied_example(calls: list[ToolCall], task: str) -> bool:
    """A call that writes or runs the example's file or uses its functions (`zeta_demo…`, which the
    task does not name), or whose content is only the example's own lines. A loop variable that
    borrows the example's name (`for zeta_number in …` in the task's own code) is no copy: the
    1.5B's right-shaped bottle_song.py was thrown away for it, and re-asked as "no action"."""
    for call in calls:
        content = str(call.arguments.get("content") or "")
        if any(m in str(v) and m not in task for m in EXAMPLE_MARKERS[:1] for v in call.arguments.values()):
            return True
        lines = {ln.strip() for ln in content.splitlines() if ln.strip()}
        if any(m in content and m not in task for m in EXAMPLE_MARKERS) and lines <= _example_lines():
            return True
    return False


@functools.lru_cache(maxsize=1)
def _example_lines() -> frozenset[str]:
    """Every line of the example replies (the code a copy would carry), stripped."""
    texts = [templates()[2], *(edit_templates(k)[1] for k in ("add", "fix"))]
    return frozenset(ln.strip() for t in texts for ln in t.splitlines() if ln.strip())
