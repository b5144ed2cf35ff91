"""A rename the task asks for ("Rename calc_total to compute_total in shop.py and main.py"),
written as whole-word edits of every line that names it: no model call, the same gate.

A rename is mechanical, and a small model gets it wrong in the ways people notice (it drops
the import line, renames half the uses). Like an editor's rename, the loop writes the edits
itself — one SEARCH/REPLACE hunk per line that names the old identifier, in the files the task
names (or, when it names none, every code file that uses it) — as the step's Sym-Ops reply.
They pass the gate as any edit and the result is checked like any change. Anything the rule
does not recognise (a file rename, a name not found) goes to the model as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any

from duckflow.companion import checks
from duckflow.llm.types import ToolCall

RENAME = re.compile(r"\b(?:rename|renaming)\s+(?:the\s+)?(?:function|class|method|variable|constant|name)?\s*"
                    r"[`'\"]?([A-Za-z_]\w*)(?:\(\))?[`'\"]?\s+(?:to|into|as)\s+[`'\"]?([A-Za-z_]\w*)(?:\(\))?[`'\"]?(?![\w.(])",
                    re.I)
RENAME_JA = re.compile(r"[`'\"「]?([A-Za-z_]\w*)[`'\"」]?\s*を\s*[`'\"「]?([A-Za-z_]\w*)[`'\"」]?\s*に"
                       r"(?:リネーム|名前を?変更|改名|変更)")
CODE = (".py", ".js", ".ts", ".jsx", ".tsx", ".go", ".rs", ".java", ".rb", ".c", ".h", ".cpp", ".sh")
MAX_CHARS = 200_000


def asked_rename(task: str) -> tuple[str, str] | None:
    found = RENAME.search(task) or RENAME_JA.search(task)
    if found is None or found.group(1) == found.group(2):
        return None
    return found.group(1), found.group(2)


def rename_reply(task: str, files: list[str], read: Callable[[str], str | None]) -> str | None:
    """The Sym-Ops reply that renames the identifier the task names, or None."""
    asked = asked_rename(task)
    if asked is None:
        return None
    old, new = asked
    word = re.compile(rf"(?<![\w.]){re.escape(old)}\b")
    words = {w.rstrip(".") for w in re.findall(r"[\w./-]+", task)}
    named = [f for f in files if f in words or PurePosixPath(f).name in words]
    blocks = []
    for path in named or [f for f in files if f.endswith(CODE)]:
        text = read(path)
        if text is None or len(text) > MAX_CHARS:
            continue
        lines = [ln for ln in text.splitlines(keepends=True) if word.search(ln)]
        if not lines:
            continue
        hunks = "".join(f"<<<<<<< SEARCH\n{_nl(ln)}=======\n{_nl(word.sub(new, ln))}>>>>>>> REPLACE\n"
                        for ln in lines)
        blocks.append(f"$ edit @ {path}\n---\n{hunks}---\n")
    if not blocks:
        return None
    where = ", ".join(b.split("\n", 1)[0].removeprefix("$ edit @ ") for b in blocks)
    return (f"~ rename {old} to {new} in {where}: every line that names it, whole words\n"
            "#c0.9 #m0.8 #f0.9 #s0.9\n" + "".join(blocks) + "~ next: DONE\n")


def _nl(line: str) -> str:
    return line if line.endswith("\n") else line + "\n"


def loop_reply(session: Any, proto: Any, denied: list[Any], files: list[str]) -> tuple[str, list[ToolCall], bool] | None:
    """The first step's reply when the loop can write it itself — a rename the task asks for —
    as (raw reply, calls, said DONE); None when the model is asked as usual (later steps, a
    denial, another protocol, no rename)."""
    if proto.codec.name != "symops" or session.state.evidence or denied or checks.log_of(session).written:
        return None
    raw = rename_reply(session.state.task or "", files, session.runner.read_text)
    if raw is None:
        return None
    said = raw.splitlines()[0].removeprefix("~ ").replace(": every line that names it, whole words", "")
    session.chunks.notice("rename", f"{said[0].upper()}{said[1:]} (every use, whole words; no model call)")
    return raw, list(proto.codec.decode(raw, session.runner.specs).calls), True
