"""Thinking sections (`<think>…</think>`) outside content blocks, blanked before repair.

Models trained to reason write a thinking section first, sometimes only its closing tag (the
chat template held the opening one), sometimes one between actions. Nothing in it may run.
A tag line *inside* a content block is file content and stays: the walk follows the strict
block rule (an action line, then a dash fence, closed by the same fence) and skips blocks.
Removed lines are replaced by empty lines so line numbers still point into the reply.
"""

from __future__ import annotations

import re

from duckflow.protocols.symops.lines import undecorate

_OPEN = re.compile(r"[ \t]*(?:[-*>][ \t]*)?<(think|thinking|reasoning|reflection)>", re.I)
_CLOSE_LINE = re.compile(r"[ \t]*</(think|thinking|reasoning|reflection)>[ \t]*", re.I)


def _is_fence(s: str) -> bool:
    t = s.strip(" \t")
    return len(t) >= 2 and t.count("-") == len(t)


def strip_thinking(text: str) -> tuple[str, str]:
    """`text` with thinking sections outside blocks blanked, and a detail ('' when none was).

    Handles a section at the very start (closed or not), a lone closing tag before which
    nothing opened (everything up to it was thinking), and sections between actions.
    """
    if "<" not in text:
        return text, ""
    lines = text.split("\n")
    detail = ""
    fence: str | None = None
    opened: tuple[int, str] | None = None  # (line index, tag) of an open section
    prev_action = False
    for i, ln in enumerate(lines):
        if fence is not None:
            if ln.rstrip(" \t") == fence:
                fence = None
            continue
        if opened is not None:
            m = re.search(rf"</{opened[1]}\s*>", ln, re.I)
            if m is None:
                continue
            rest = ln[m.end() :]
            for k in range(opened[0], i):
                lines[k] = ""
            lines[i] = rest if rest.strip() else ""
            opened, prev_action = None, False
            detail = detail or "thinking section"
            continue
        if prev_action and _is_fence(ln):
            fence, prev_action = ln.rstrip(" \t"), False
            continue
        if not ln.strip():
            prev_action = False
            continue
        m = _OPEN.match(ln)
        if m is not None:
            close = re.search(rf"</{m.group(1)}\s*>", ln[m.end() :], re.I)
            if close is not None:  # one line: `<think>...</think> rest`
                lines[i] = ln[m.end() + close.end() :]
                detail = detail or "thinking section"
                continue
            opened = (i, m.group(1))
            continue
        if _CLOSE_LINE.fullmatch(ln):
            # a closing tag nobody opened: everything before it (outside blocks) was thinking
            for k in range(i + 1):
                lines[k] = ""
            detail = detail or "closing tag only"
            prev_action = False
            continue
        prev_action = undecorate(ln.strip()).lstrip()[:1] in ("$", "＄")
    if opened is not None:
        for k in range(opened[0], len(lines)):  # never closed: the rest of the reply was thinking
            lines[k] = ""
        detail = "unclosed thinking: all of it dropped"
    return ("\n".join(lines), detail) if detail else (text, "")
