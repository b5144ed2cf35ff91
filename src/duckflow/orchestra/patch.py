"""Unified diffs from a Coder, split per file and turned into SEARCH/REPLACE hunks for the Worker.

`parse_unified_diff(text)` reads `--- a/PATH` / `+++ b/PATH` / `@@` hunks (a ```diff fence
around it is fine) into `FilePatch` objects. `FilePatch.edit_blocks()` writes each hunk as a
SEARCH (context + removed lines) / REPLACE (context + added lines) pair, so that
`Workspace.edit_file` applies it with the hunk-matching ladder of `protocols.editblocks`
(exact, indentation offset, stray blank line, elisions) — line numbers in the diff are ignored,
which makes slightly stale patches still apply while ambiguous ones are refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")
_FENCE = re.compile(r"^```[\w+-]*[ \t]*$")


@dataclass
class DiffHunk:
    old: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)


@dataclass
class FilePatch:
    """One file's part of a diff. `path` is workspace-relative; `created`/`deleted` from /dev/null."""

    path: str
    hunks: list[DiffHunk] = field(default_factory=list)
    created: bool = False
    deleted: bool = False

    def edit_blocks(self) -> str:
        out = []
        for h in self.hunks:
            search = "\n".join(h.old)
            replace = "\n".join(h.new)
            out.append(f"<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE")
        return "\n".join(out) + "\n"

    def new_content(self) -> str:
        """A created file's text (all its added lines)."""
        lines = [line for h in self.hunks for line in h.new]
        return "\n".join(lines) + ("\n" if lines else "")


class PatchError(ValueError):
    """The text is not a unified diff Duckflow can apply."""


def _path(raw: str) -> str:
    name = raw.split("\t", 1)[0].strip()
    if name.startswith(("a/", "b/")):
        name = name[2:]
    return name


def parse_unified_diff(text: str) -> list[FilePatch]:
    lines = [line for line in text.replace("\r\n", "\n").split("\n") if not _FENCE.match(line.strip())]
    files: list[FilePatch] = []
    current: FilePatch | None = None
    hunk: DiffHunk | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            old, new = _path(line[4:]), _path(lines[i + 1][4:])
            current = FilePatch(path=new if new != "/dev/null" else old, created=old == "/dev/null",
                                deleted=new == "/dev/null")
            files.append(current)
            hunk = None
            i += 2
            continue
        if _HUNK.match(line):
            if current is None:
                raise PatchError("a hunk comes before any '--- a/PATH' / '+++ b/PATH' header")
            hunk = DiffHunk()
            current.hunks.append(hunk)
        elif hunk is not None and (line.startswith((" ", "-", "+")) or line == ""):
            if line.startswith("-"):
                hunk.old.append(line[1:])
            elif line.startswith("+"):
                hunk.new.append(line[1:])
            elif line == "" and i == len(lines) - 1:
                pass  # the text's final newline
            else:
                hunk.old.append(line[1:])
                hunk.new.append(line[1:])
        i += 1
    if not files:
        raise PatchError("no '--- a/PATH' / '+++ b/PATH' file headers found")
    for f in files:
        if not f.hunks and not f.deleted:
            raise PatchError(f"{f.path}: no @@ hunks")
        if f.path.startswith("/") or ".." in f.path.split("/"):
            raise PatchError(f"{f.path}: paths must be relative to the workspace")
    return files
