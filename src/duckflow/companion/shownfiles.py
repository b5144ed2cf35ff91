"""The workspace as a single-call step shows it: the file listing, the files the task names with
their text, and what a small model misreads in them (a CSV file's header row)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from duckflow.protocols.filenames import plausible_paths

MAX_FILES_SHOWN = 4
MAX_FILE_CHARS = 2500
LISTING_LIMIT = 60
SKIP_DIRS = {".git", ".duckflow", "__pycache__", ".venv", "node_modules", ".pytest_cache", ".mypy_cache"}


def workspace_files(root: Path, limit: int = LISTING_LIMIT) -> list[str]:
    """Relative paths of the workspace's files (hidden and tool folders skipped), sorted."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            found.append(str((Path(dirpath) / name).relative_to(root)))
            if len(found) >= limit:
                return found
    return found


def shown_files(read: Callable[[str], str | None], files: list[str], task: str) -> dict[str, str]:
    """The files the task names (or all, when the workspace is tiny), with their text (cut)."""
    named = set(plausible_paths(task, []))
    chosen = [f for f in files if f in named or Path(f).name in named]
    if not chosen and len(files) <= 2:
        chosen = files
    shown: dict[str, str] = {}
    for rel in chosen[:MAX_FILES_SHOWN]:
        text = read(rel)
        if text is not None:
            shown[rel] = text
    return shown


def file_block(shown: dict[str, str]) -> str:
    parts = []
    for rel, text in shown.items():
        head = header_row(rel, text)
        if len(text) > MAX_FILE_CHARS:
            text = text[:MAX_FILE_CHARS] + "\n... (cut)"
        parts.append(f"File {rel}:\n---\n{text.rstrip()}\n---")
        if head:  # a small model summed the header's "amount" as a number (ValueError)
            parts.append(f"(The first line of {rel} is a header: {head}. The values start on line 2.)")
    return "\n".join(parts)


def header_row(rel: str, text: str) -> str:
    """The first line of a CSV or TSV file when it is a header (the standard library's csv.Sniffer), else ""."""
    if not rel.lower().endswith((".csv", ".tsv")) or "\n" not in text.strip():
        return ""
    import csv

    sample = text[:4096]
    try:
        has = csv.Sniffer().has_header(sample)
    except csv.Error:
        return ""
    return text.splitlines()[0].strip() if has else ""
