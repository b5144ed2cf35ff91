"""Diff previews for approval requests: a unified diff with a size cap that says what it cut.

What a person is shown is what is written: the file is split at `\n` only (as an editor and
Python's `\r\n`-aware reading do; `str.splitlines` would also break at `\x0b`, `\x0c`,
`\x1c`-`\x1e`, `\x85`, U+2028/2029), and characters that would hide or reorder text where the
request is shown (terminal escapes, a lone `\r`, bidi overrides as in "Trojan Source",
zero-width characters) appear as `\x1b` / `\u202e` escapes (`visible`).
"""

from __future__ import annotations

import difflib
import re

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
    old_lines = _lines(old or "")
    new_lines = _lines(new or "")
    fromfile = "/dev/null" if old is None else f"a/{path}"
    tofile = "/dev/null" if new is None else f"b/{path}"
    lines: list[str] = []
    for line in difflib.unified_diff(old_lines, new_lines, fromfile, tofile, n=context):
        end = "\r\n" if line.endswith("\r\n") else "\n" if line.endswith("\n") else ""
        line = visible(line[:len(line) - len(end)]) + end
        if not end:
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


_LINE = re.compile(r"[^\n]*\n|[^\n]+$")
# C0 but tab and newline, a `\r` not ending a line, DEL, C1, Arabic letter mark, zero-width and
# direction marks, line/paragraph separators, bidi embeddings/overrides/isolates, word joiners, BOM
_HIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e"
                     "\u2060-\u2069\ufeff]|\r(?!\n)")


def _lines(text: str) -> list[str]:
    return _LINE.findall(text)


def visible(text: str) -> str:
    """`text` with characters that could hide or reorder what is shown written as escapes."""
    if not _HIDDEN.search(text):
        return text
    return _HIDDEN.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                       else f"\\u{ord(m.group()):04x}", text)
