"""Diff previews for approval requests: a unified diff with a size cap that says what it cut."""

from __future__ import annotations

import difflib

DEFAULT_MAX_LINES = 200
DEFAULT_MAX_CHARS = 20_000


def unified_diff(
    path: str,
    old: str | None,
    new: str | None,
    *,
    context: int = 3,
    max_lines: int = DEFAULT_MAX_LINES,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> str:
    """A unified diff of one file, `a/PATH` -> `b/PATH` (`/dev/null` for a created or deleted file).

    Longer than `max_lines` lines or `max_chars` characters: cut, and the last line says how
    many lines were left out. Identical contents give "" (nothing to show).
    """
    old_lines = (old or "").splitlines(keepends=True)
    new_lines = (new or "").splitlines(keepends=True)
    fromfile = "/dev/null" if old is None else f"a/{path}"
    tofile = "/dev/null" if new is None else f"b/{path}"
    lines: list[str] = []
    for line in difflib.unified_diff(old_lines, new_lines, fromfile, tofile, n=context):
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        lines.append(line)
    if not lines:
        return ""
    return cap_diff("".join(lines), max_lines=max_lines, max_chars=max_chars)


def cap_diff(text: str, *, max_lines: int = DEFAULT_MAX_LINES, max_chars: int = DEFAULT_MAX_CHARS) -> str:
    """Cut a diff to at most `max_lines` lines and about `max_chars` characters, with a note."""
    lines = text.splitlines(keepends=True)
    kept: list[str] = []
    size = 0
    for line in lines:
        if len(kept) >= max_lines or size + len(line) > max_chars:
            break
        kept.append(line)
        size += len(line)
    cut = len(lines) - len(kept)
    if cut == 0:
        return text
    out = "".join(kept)
    if out and not out.endswith("\n"):
        out += "\n"
    return out + f"... diff cut: {cut} more line(s) not shown\n"
