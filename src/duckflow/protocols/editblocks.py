"""SEARCH/REPLACE edit hunks: tolerant parsing, strict application with a matching ladder.

An edit's content is either a whole new file or one or more hunks::

    <<<<<<< SEARCH
    old lines
    =======
    new lines
    >>>>>>> REPLACE

Markers may have 5 to 9 marker characters (models miscount) and surrounding whitespace.
Application is strict (the shape follows aider's edit blocks, see docs/protocols/editblocks.md):
each hunk is tried, in order, as an exact match, then with a uniform indentation offset, then
without a spurious leading/trailing blank line, then with `...` elision lines — never a loose
fuzzy match. A search text found more than once is refused, not guessed. A failed hunk
reports the closest lines of the file (difflib) so that a re-ask can point at them.

Empty SEARCH rule: a SEARCH section with nothing but blank lines adds the REPLACE text at the
end of the file, or, when the file ends with a top-level `if __name__ == "__main__":` block,
just before that block (an addition after it would never be defined when the script runs);
on an empty file this creates the content. `duplicate_definitions` names the top-level
functions or classes such an addition would define a second time (a caller re-asks).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

_MARKER = re.compile(r"(?m)^[ \t]*(?:(<{5,9})[ \t]*SEARCH|(={5,9})|(>{5,9})[ \t]*REPLACE)[ \t]*\r?$")


@dataclass(frozen=True)
class Hunk:
    """One SEARCH/REPLACE pair. `complete` is False for a hunk cut off before its REPLACE marker."""

    search: str
    replace: str
    complete: bool = True


@dataclass(frozen=True)
class HunkFailure:
    """Why hunk `index` (0-based) did not apply, and the file lines closest to its SEARCH text."""

    index: int
    reason: str
    closest: str = ""
    closest_line: int = 0  # 1-based line of `closest` in the file; 0 when there is none


@dataclass
class ApplyResult:
    """`text` holds the original with every hunk that applied; `applied` names each one's method."""

    ok: bool
    text: str
    applied: list[str] = field(default_factory=list)
    failures: list[HunkFailure] = field(default_factory=list)


def parse_hunks(content: str) -> list[Hunk] | None:
    """Hunks in `content`, or None when it has no SEARCH marker (then it is a whole new file).

    Text between hunks (prose, code fences, a file name) is ignored. A hunk cut off by the end
    of the text is returned with `complete=False`; `apply_hunks` never applies it.
    """
    if "SEARCH" not in content:
        return None
    hunks: list[Hunk] = []
    state = "outside"
    body = 0  # where the current section's text starts
    search = ""
    for m in _MARKER.finditer(content):
        kind = "search" if m.group(1) else ("divider" if m.group(2) else "replace")
        line_start = m.start()
        after = m.end() + 1 if m.end() < len(content) else m.end()
        if state == "outside":
            if kind == "search":
                state, body = "search", after
        elif state == "search":
            if kind == "divider":
                search = content[body:line_start]
                state, body = "replace", after
        elif kind == "replace":
            hunks.append(Hunk(search, content[body:line_start]))
            state = "outside"
    if state == "outside" and not hunks:
        return None
    if state == "search":
        hunks.append(Hunk(content[body:], "", complete=False))
    elif state == "replace":
        hunks.append(Hunk(search, content[body:], complete=False))
    return hunks


_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")


def _split_keep(text: str) -> tuple[list[str], list[str]]:
    """(lines without terminators, their terminators: "\r\n", "\n" or "" for the last)."""
    bare: list[str] = []
    ends: list[str] = []
    for piece in _LINE.findall(text):
        end = "\r\n" if piece.endswith("\r\n") else ("\n" if piece.endswith("\n") else "")
        bare.append(piece[: len(piece) - len(end)])
        ends.append(end)
    return bare, ends


def _lines(text: str) -> list[str]:
    """Lines without their terminators (line endings are not something a model reproduces)."""
    return _split_keep(text)[0]


def _splice(
    doc: tuple[list[str], list[str]], start: int, n: int, new: list[str], newline: str
) -> tuple[list[str], list[str]]:
    """Replace lines start..start+n by `new`; untouched lines keep their own line endings."""
    hay, ends = doc
    nl = (ends[start] or newline) if n else newline
    new_ends = [nl] * len(new)
    if new and n and start + n == len(hay) and ends[-1] == "":
        new_ends[-1] = ""
    return hay[:start] + new + hay[start + n :], ends[:start] + new_ends + ends[start + n :]


def _find(hay: Sequence[str], needle: Sequence[str], start: int = 0) -> list[int]:
    n = len(needle)
    if n == 0:
        return []
    first = needle[0]
    return [
        i
        for i in range(start, len(hay) - n + 1)
        if hay[i] == first and list(hay[i : i + n]) == list(needle)
    ]


def _ws(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _indent_offset(window: Sequence[str], search: Sequence[str]) -> tuple[str, int] | None:
    """(prefix, sign) when `window` equals `search` up to one uniform indentation change.

    sign +1: the file has `prefix` more indentation than the search; -1: less.
    """
    prefix: str | None = None
    sign = 0
    for got, want in zip(window, search, strict=True):
        if not want.strip():
            if got.strip():
                return None
            continue
        if got.lstrip() != want.lstrip():
            return None
        gw, ww = _ws(got), _ws(want)
        if gw.startswith(ww) and len(gw) > len(ww):
            cand, s = gw[len(ww) :], 1
        elif ww.startswith(gw) and len(ww) > len(gw):
            cand, s = ww[len(gw) :], -1
        elif gw == ww:
            cand, s = "", 0
        else:
            return None
        if prefix is None:
            prefix, sign = cand, s
        elif (cand, s) != (prefix, sign):
            return None
    if not prefix:
        return None
    return prefix, sign


def _reindent(lines: Sequence[str], prefix: str, sign: int) -> list[str]:
    out: list[str] = []
    for line in lines:
        if not line.strip():
            out.append(line)
        elif sign > 0:
            out.append(prefix + line)
        else:
            ws = _ws(line)
            cut = len(prefix) if ws.startswith(prefix) else len(ws)
            out.append(line[cut:])
    return out


class _Refused(Exception):
    """A rung found the search text more than once: stop the ladder, report honestly."""

    def __init__(self, rows: list[int]) -> None:
        super().__init__(rows)
        self.rows = rows


def _match(hay: list[str], search: list[str], replace: list[str]) -> tuple[int, int, list[str], str] | None:
    """(start, length, new_lines, method) for exact or indentation matches; raises _Refused."""
    hits = _find(hay, search)
    if len(hits) > 1:
        raise _Refused(hits)
    if hits:
        return hits[0], len(search), list(replace), "exact"
    n = len(search)
    found: list[tuple[int, tuple[str, int]]] = []
    stripped = [s.lstrip() for s in search]
    for i in range(len(hay) - n + 1):
        if hay[i].lstrip() != stripped[0]:
            continue
        off = _indent_offset(hay[i : i + n], search)
        if off is not None:
            found.append((i, off))
    if len(found) > 1:
        raise _Refused([i for i, _ in found])
    if found:
        i, (prefix, sign) = found[0]
        return i, n, _reindent(replace, prefix, sign), "indent"
    return None


def _trim_blank(lines: list[str]) -> list[str]:
    lo, hi = 0, len(lines)
    while lo < hi and not lines[lo].strip():
        lo += 1
    while hi > lo and not lines[hi - 1].strip():
        hi -= 1
    return lines[lo:hi]


def _strip_like(search: list[str], replace: list[str]) -> list[str]:
    """Drop from `replace` the blank lines that were spurious at the ends of `search`."""
    lead = len(search) - len(_trim_blank(search + ["x"])) + 1
    trail = len(search) - len(_trim_blank(["x"] + search)) + 1
    lo, hi = 0, len(replace)
    while lo < lead and lo < hi and not replace[lo].strip():
        lo += 1
    while trail > 0 and hi > lo and not replace[hi - 1].strip():
        hi -= 1
        trail -= 1
    return replace[lo:hi]


def _split_elisions(lines: list[str]) -> list[list[str]]:
    pieces: list[list[str]] = [[]]
    for line in lines:
        if line.strip() == "...":
            pieces.append([])
        else:
            pieces[-1].append(line)
    return pieces


def _apply_one(
    doc: tuple[list[str], list[str]], hunk: Hunk, newline: str
) -> tuple[tuple[list[str], list[str]], str]:
    """The file's new (lines, endings) and the method used; raises _Refused or LookupError."""
    hay = doc[0]
    search, replace = _lines(hunk.search), _lines(hunk.replace)
    m = _match(hay, search, replace)
    if m is not None:
        start, n, new, method = m
        return _splice(doc, start, n, new, newline), method
    trimmed = _trim_blank(search)
    if trimmed and trimmed != search:
        m = _match(hay, trimmed, _strip_like(search, replace))
        if m is not None:
            start, n, new, _ = m
            return _splice(doc, start, n, new, newline), "blank_line"
    s_parts, r_parts = _split_elisions(search), _split_elisions(replace)
    if len(s_parts) > 1 and len(s_parts) == len(r_parts):
        out = doc
        pos = 0
        for s_part, r_part in zip(s_parts, r_parts, strict=True):
            if not s_part:
                if r_part:
                    raise LookupError("an elided part of SEARCH maps to new lines in REPLACE")
                continue
            hits = _find(out[0], s_part)
            if len(hits) > 1:
                raise _Refused(hits)
            if not hits or hits[0] < pos:
                raise LookupError("a part between `...` lines was not found in order")
            i = hits[0]
            out = _splice(out, i, len(s_part), r_part, newline)
            pos = i + len(r_part)
        return out, "elision"
    raise LookupError("SEARCH text not found")


_MAIN_GUARD = re.compile(r"""^if\s+__name__\s*==\s*['"]__main__['"]\s*:""")
_DEF = re.compile(r"^(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)", re.M)


def _add(doc: tuple[list[str], list[str]], new: list[str], new_ends: list[str],
         newline: str) -> tuple[tuple[list[str], list[str]], str]:
    """Add lines at the end, or before the file's closing top-level `if __name__` block."""
    lines, ends = list(doc[0]), list(doc[1])
    guard = next((i for i, ln in enumerate(lines) if _MAIN_GUARD.match(ln)), None)
    if guard is not None and not any(ln.strip() and not ln[:1].isspace() for ln in lines[guard + 1:]):
        body = _trim_blank(new)
        if body:
            cut = guard
            while cut > 0 and not lines[cut - 1].strip():
                cut -= 1
            block = ([""] * 2 if cut else []) + body + [""] * 2
            lines = lines[:cut] + block + lines[guard:]
            ends = ends[:cut] + [newline] * len(block) + ends[guard:]
            return (lines, ends), "add_before_main"
    if ends and ends[-1] == "":
        ends[-1] = newline
    return (lines + new, ends + new_ends), "append"


def duplicate_definitions(original: str, hunks: Sequence[Hunk]) -> list[str]:
    """Top-level names an empty-SEARCH hunk defines that the file already defines (a second
    `def main()`): the change should replace the existing one instead."""
    have = set(_DEF.findall(original))
    return sorted({name for h in hunks if h.complete and not h.search.strip()
                   for name in _DEF.findall(h.replace) if name in have})


def as_replacements(original: str, hunks: Sequence[Hunk]) -> list[Hunk] | None:
    """Empty-SEARCH hunks that each (re)define exactly one top-level function or class the file
    already has, turned into replacements of that definition (its lines up to the next
    top-level line); None when any such hunk holds anything else (it cannot be read so)."""
    lines = _lines(original)
    out: list[Hunk] = []
    changed = False
    for h in hunks:
        names = _DEF.findall(h.replace) if h.complete and not h.search.strip() else []
        have = [n for n in names if re.search(rf"^(?:async\s+)?(?:def|class)\s+{n}\b", original, re.M)]
        if not have:
            out.append(h)
            continue
        body = _trim_blank(_lines(h.replace))
        if len(names) != 1 or not body or not _DEF.match(body[0]) or any(
                ln.strip() and not ln[:1].isspace() for ln in body[1:]):
            return None
        start = next(i for i, ln in enumerate(lines) if re.match(rf"(?:async\s+)?(?:def|class)\s+{names[0]}\b", ln))
        end = next((i for i in range(start + 1, len(lines)) if lines[i].strip() and not lines[i][:1].isspace()),
                   len(lines))
        old = _trim_blank(lines[start:end])
        out.append(Hunk("\n".join(old) + "\n", "\n".join(body) + "\n"))
        changed = True
    return out if changed else None


def closest_lines(text: str, search: str) -> tuple[str, int]:
    """The window of `text` most similar to `search` (difflib ratio) and its 1-based first line."""
    hay, needle = _lines(text), _trim_blank(_lines(search))
    if not hay or not needle:
        return "", 0
    n = min(len(needle), len(hay))
    target = "\n".join(needle)
    best, best_i = -1.0, 0
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(target)
    for i in range(len(hay) - n + 1):
        matcher.set_seq1("\n".join(hay[i : i + n]))
        if matcher.real_quick_ratio() <= best or matcher.quick_ratio() <= best:
            continue
        r = matcher.ratio()
        if r > best:
            best, best_i = r, i
    if best <= 0:
        return "", 0
    return "\n".join(hay[best_i : best_i + n]), best_i + 1


def apply_hunks(original: str, hunks: Sequence[Hunk]) -> ApplyResult:
    """Apply `hunks` in order to `original`; see the module docstring for the ladder.

    `ok` is True only when every hunk applied. Failed hunks are skipped (the others still
    apply to `text`) and listed in `failures` with the closest lines of the file. Lines that no
    hunk touches keep their bytes, line endings included.
    """
    newline = "\r\n" if "\r\n" in original else "\n"
    doc = _split_keep(original)
    applied: list[str] = []
    failures: list[HunkFailure] = []
    for index, hunk in enumerate(hunks):
        hay = doc[0]
        if not hunk.complete:
            failures.append(
                HunkFailure(index, "hunk is not closed (no '>>>>>>> REPLACE' line): the reply was cut off")
            )
            continue
        if not hunk.search.strip():
            # Empty SEARCH: add at the end, or before a closing `if __name__` block
            new, new_ends = _split_keep(hunk.replace)
            doc, where = _add(doc, new, [newline if e else "" for e in new_ends], newline)
            applied.append(where)
            continue
        try:
            doc, method = _apply_one(doc, hunk, newline)
            applied.append(method)
        except _Refused as refused:
            rows = ", ".join(str(r + 1) for r in refused.rows[:5])
            first = refused.rows[0]
            n = len(_trim_blank(_lines(hunk.search))) or 1
            failures.append(
                HunkFailure(
                    index,
                    f"SEARCH text matches {len(refused.rows)} places (lines {rows}); "
                    "add surrounding lines so it matches exactly one",
                    "\n".join(hay[first : first + n]),
                    first + 1,
                )
            )
        except LookupError as err:
            closest, line = closest_lines("\n".join(hay), hunk.search)
            reason = f"{err} (tried exact, indentation, blank-line and `...` elision matches)"
            if hunk.replace.strip() and _find(hay, _trim_blank(_lines(hunk.replace))):
                reason += "; the REPLACE text is already in the file: the edit may be applied already"
            failures.append(HunkFailure(index, reason, closest, line))
    text = "".join(line + end for line, end in zip(doc[0], doc[1], strict=True))
    return ApplyResult(not failures, text, applied, failures)


def describe_failures(result: ApplyResult, path: str = "the file") -> str:
    """A re-ask text naming each failed hunk and quoting the closest real lines."""
    parts: list[str] = []
    for f in result.failures:
        msg = f"Hunk {f.index + 1} for {path} did not apply: {f.reason}."
        if f.closest:
            msg += f"\nThe closest lines in {path} (from line {f.closest_line}) are:\n{f.closest}"
        parts.append(msg)
    if parts:
        parts.append("Resend only the failed hunks, with SEARCH text copied exactly from the file.")
    return "\n\n".join(parts)
