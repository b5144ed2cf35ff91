"""Reads a function's docstring into a summary and per-parameter descriptions.

Understands the Google style (``Args:`` / ``Arguments:`` / ``Parameters:`` followed by
indented ``name (type): text`` lines) and the NumPy style (a ``Parameters`` heading
underlined with dashes, then ``name : type`` lines with indented text). Other docstrings
give a summary and no parameter descriptions.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

_GOOGLE_HEAD = re.compile(r"^(Args|Arguments|Parameters|Params)\s*:\s*$")
_GOOGLE_PARAM = re.compile(r"^\*{0,2}(\w+)\s*(?:\(([^)]*)\))?\s*:\s*(.*)$")
_NUMPY_PARAM = re.compile(r"^\*{0,2}(\w+)\s*(?::\s*(.*))?$")
_SECTION_WORDS = {
    "returns", "return", "yields", "raises", "examples", "example", "notes", "note",
    "see also", "references", "attributes", "warnings", "warns", "other parameters",
}


@dataclass
class ParsedDoc:
    summary: str = ""
    params: dict[str, str] = field(default_factory=dict)


def parse_docstring(doc: str | None) -> ParsedDoc:
    """Split a docstring into its summary (first paragraph) and parameter descriptions."""
    if not doc:
        return ParsedDoc()
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    for line in lines:
        if not line.strip() or _GOOGLE_HEAD.match(line.strip()) or _is_numpy_head(lines, line):
            break
        summary.append(line.strip())
    params = _google_params(lines) or _numpy_params(lines)
    return ParsedDoc(" ".join(summary), params)


def _is_numpy_head(lines: list[str], line: str) -> bool:
    i = lines.index(line)
    return i + 1 < len(lines) and bool(re.fullmatch(r"\s*-{3,}\s*", lines[i + 1]))


def _google_params(lines: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    in_section = False
    base_indent = -1
    current = ""
    for line in lines:
        stripped = line.strip()
        if _GOOGLE_HEAD.match(stripped) and not line[:1].isspace():
            in_section, base_indent, current = True, -1, ""
            continue
        if not in_section:
            continue
        if not stripped:
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:  # next section ("Returns:")
            in_section = False
            continue
        if base_indent < 0:
            base_indent = indent
        match = _GOOGLE_PARAM.match(stripped)
        if indent == base_indent and match:
            current = match.group(1)
            out[current] = match.group(3).strip()
        elif current and indent > base_indent:
            out[current] = (out[current] + " " + stripped).strip()
    return out


def _numpy_params(lines: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    i = 0
    while i < len(lines) - 1:
        head = lines[i].strip().lower()
        underline = re.fullmatch(r"\s*-{3,}\s*", lines[i + 1]) is not None
        if underline and head in {"parameters", "params", "arguments", "args"}:
            i += 2
            current = ""
            while i < len(lines):
                line = lines[i]
                stripped = line.strip()
                if i + 1 < len(lines) and re.fullmatch(r"\s*-{3,}\s*", lines[i + 1]):
                    break  # the next section's heading
                if stripped.lower() in _SECTION_WORDS:
                    break
                if stripped and not line[:1].isspace():
                    match = _NUMPY_PARAM.match(stripped)
                    current = match.group(1) if match else ""
                    if current:
                        out[current] = ""
                elif stripped and current:
                    out[current] = (out[current] + " " + stripped).strip()
                i += 1
            return out
        i += 1
    return out
