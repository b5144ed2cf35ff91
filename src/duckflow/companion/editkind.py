"""Which edit example a single-call step shows: `add` (a new function at the end) or `fix` (lines replaced).

A small model copies the example's shape, so the step shows the one that matches the task's
wording (companion/singlecall.py picks it at the task's first step and keeps it).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

DATA = Path(__file__).parent / "data" / "singlecall"

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
