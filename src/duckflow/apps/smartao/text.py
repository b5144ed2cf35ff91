"""Essay text helpers: language guess, headings and sections, normalisation and n-gram shingles.

Headings are what the Draft agent must never change. Recognised: Markdown ATX (`# Title`),
setext (a line underlined with === or ---), and the Japanese conventions of application
essays: a line in 【】 brackets, or a line starting with ■ □ ◆ ◇ ● ▼ ▶.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff66-\uff9f]")
_ATX = re.compile(r"^ {0,3}#{1,6}(?:[ \t]+\S.*|[ \t]*)$")
_JA_HEADING = re.compile(r"^\s*(?:【[^】\n]+】\s*|[■□◆◇●▼▶].*)$")
_SETEXT = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")


def language(text: str) -> str:
    """'ja' when at least a fifth of the letters are Japanese/CJK, else 'en'."""
    letters = [ch for ch in text if ch.isalpha()]
    if not letters:
        return "en"
    cjk = sum(1 for ch in letters if _CJK.match(ch))
    return "ja" if cjk * 5 >= len(letters) else "en"


@dataclass(frozen=True)
class Section:
    """A heading (may be empty: text before the first heading) and the body after it.

    Offsets are into the whole text: `heading` is `text[h_start:h_end]` (with its underline for a
    setext heading), the body is `text[b_start:b_end]`.
    """

    heading: str
    h_start: int
    h_end: int
    b_start: int
    b_end: int


def _lines(text: str) -> list[tuple[int, int, str]]:
    """(start, end-without-newline, line) for every line."""
    out = []
    pos = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        out.append((pos, pos + len(body), body))
        pos += len(line)
    return out


def sections(text: str) -> list[Section]:
    """The text cut at its headings; concatenating the parts gives the text back."""
    lines = _lines(text)
    marks: list[tuple[int, int]] = []  # (start, end) of heading spans, end includes newline
    i = 0
    while i < len(lines):
        start, end, line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else None
        if _ATX.match(line) or _JA_HEADING.match(line):
            marks.append((start, _after_newline(text, end)))
        elif line.strip() and nxt is not None and _SETEXT.match(nxt[2]) and not _ATX.match(line):
            marks.append((start, _after_newline(text, nxt[1])))
            i += 1
        i += 1
    out: list[Section] = []
    if not marks or marks[0][0] > 0:
        first = marks[0][0] if marks else len(text)
        out.append(Section("", 0, 0, 0, first))
    for k, (hs, he) in enumerate(marks):
        body_end = marks[k + 1][0] if k + 1 < len(marks) else len(text)
        out.append(Section(text[hs:he].rstrip("\r\n"), hs, he, he, body_end))
    return out


def _after_newline(text: str, end: int) -> int:
    if text.startswith("\r\n", end):
        return end + 2
    if end < len(text) and text[end] in "\r\n":
        return end + 1
    return end


def headings(text: str) -> list[str]:
    """The headings of `text`, in order."""
    return [s.heading for s in sections(text) if s.heading]


def is_heading_line(line: str) -> bool:
    return bool(_ATX.match(line) or _JA_HEADING.match(line) or _SETEXT.match(line))


_PUNCT_CATS = ("P", "S", "Z", "C")


def normalize(text: str) -> str:
    """NFKC, lower case, punctuation and symbols dropped, runs of spaces as one space."""
    t = unicodedata.normalize("NFKC", text).lower()
    chars = [" " if unicodedata.category(ch)[0] in _PUNCT_CATS else ch for ch in t]
    return re.sub(r" +", " ", "".join(chars)).strip()


def normalize_mapped(text: str) -> tuple[str, list[int]]:
    """`normalize` (spaces dropped too for Japanese) with, for each character of the result,
    the index in `text` it came from: a shingle found in a reference points back at the essay."""
    ja = language(text) == "ja"
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        for c in unicodedata.normalize("NFKC", ch).lower():
            if unicodedata.category(c)[0] in _PUNCT_CATS:
                if ja or not out or out[-1] == " ":
                    continue
                c = " "
            out.append(c)
            where.append(i)
    while out and out[-1] == " ":
        out.pop()
        where.pop()
    return "".join(out), where


def line_col(text: str, at: int) -> tuple[int, int]:
    """1-based line and column of character index `at`."""
    line = text.count("\n", 0, at) + 1
    return line, at - (text.rfind("\n", 0, at) + 1) + 1


def shingle_size(text: str) -> int:
    """Characters per shingle: 4 for Japanese (one word is 2-3 characters), 8 otherwise.

    Chosen so that unrelated essays on one topic share almost no shingles (common short words
    and particles fall below the size) while a copied sentence shares all of its own.
    """
    return 4 if language(text) == "ja" else 8


def shingles(text: str, n: int | None = None) -> set[str]:
    """Character n-grams of the normalised text (spaces removed around CJK characters)."""
    norm = normalize(text)
    if language(text) == "ja":
        norm = norm.replace(" ", "")
    size = n or shingle_size(text)
    if len(norm) < size:
        return {norm} if norm else set()
    return {norm[i:i + size] for i in range(len(norm) - size + 1)}
