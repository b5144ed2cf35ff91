"""The check best-of-n ranks a coding step's candidate replies by, with no person: parses, applies, names the task.

`reply_score(codec, specs, root, task)` returns a `score(text)` for `llm.bestof.BestOfModel`:
+2 when the reply decodes with no errors, +1 when it declares an action, +1 per write or edit
whose file the task names (or, when the task names none, any), +1 per edit whose SEARCH
sections all match the file on disk (`protocols.editblocks`), −1 per guessed action.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

FILE = re.compile(r"[\w./-]+\.\w+")


def reply_score(codec: Any, specs: Sequence[Any], root: Path, task: str) -> Callable[[str], float]:
    named = set(FILE.findall(task))

    def score(text: str) -> float:
        from duckflow.protocols.editblocks import apply_hunks, parse_hunks

        d = codec.decode(text, specs)
        points = 0.0 if d.errors else 2.0
        calls = [c for c in d.calls if getattr(c, "executable", True)]
        points -= len(d.calls) - len(calls)
        points += 1.0 if calls else 0.0
        for c in calls:
            path = str(c.arguments.get("path") or "")
            if c.name in ("write_file", "edit_file") and (not named or path in named):
                points += 1.0
            if c.name == "edit_file":
                hunks = parse_hunks(str(c.arguments.get("content") or ""))
                target = root / path
                if hunks and target.is_file() and apply_hunks(target.read_text("utf-8", "replace"), hunks).ok:
                    points += 1.0
        return points

    return score
