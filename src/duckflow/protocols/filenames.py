"""File names a task names (`hello.py`, `src/calc.py`): read on every turn, so kept apart from the grammars."""

from __future__ import annotations

import re
from collections.abc import Sequence

SAFE_PATH = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./-]{0,120}$")


def plausible_paths(task: str, existing: Sequence[str]) -> list[str]:
    """File names the task names (`hello.py`, `src/calc.py`) plus the workspace's files."""
    # ASCII names: a Japanese task writes `hello.pyを作成` with no space around the name
    named = re.findall(r"(?<![A-Za-z0-9_/.-])((?:[A-Za-z0-9_-]+/)*[A-Za-z0-9_-]+\.[A-Za-z0-9]{1,8})"
                       r"(?![A-Za-z0-9_/-])", task)
    seen: list[str] = []
    for p in [*named, *existing]:
        p = p.strip().strip("`'\".,;:()")
        if p and SAFE_PATH.match(p) and ".." not in p.split("/") and p not in seen:
            seen.append(p)
    return seen
