"""The Gate's five points computed from the operation itself (seed 001 §8.2, M29).

- impact: which files, lines added / removed (from the diff), whether `duckflow undo` can take
  it back, which tests import the changed module;
- alternatives: what the model offered in the same reply that proposed the action (an
  `Alternatives:` / `代替案:` line) — no extra call, and no made-up fallback: "none offered";
- the diff preview of an edit that would not apply says why and shows the closest real lines.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from pathlib import Path

from duckflow.llm.types import ToolCall
from duckflow.toolkinds import UNDOABLE_TOOLS

_ALTERNATIVES = re.compile(r"^\s*[-*]?\s*(?:\*\*)?(?:alternatives?|代替案?)(?:\*\*)?\s*[:：]\s*(.+)$",
                           re.IGNORECASE | re.MULTILINE)
_NONE = {"none", "なし", "no", "n/a", "-"}
UNDOABLE = UNDOABLE_TOOLS
TESTS_SCANNED = 300
DIRS_VISITED = 2000
WALK_SECONDS = 0.2
SKIP_DIRS = {"node_modules", "__pycache__", "venv", "site-packages", "dist", "build"}


def alternatives_in(text: str) -> list[str]:
    """The alternatives a model reply names (`Alternatives: a; b`), in order; [] for none."""
    found: list[str] = []
    for m in _ALTERNATIVES.finditer(text or ""):
        for part in re.split(r"[;；]|\s\|\s", m.group(1)):
            item = part.strip().strip("`*").strip()
            if item and item.lower() not in _NONE and item not in found:
                found.append(item[:120])
    return found[:3]


def alternatives_text(found: list[str]) -> str:
    return " · ".join(found) if found else "none offered by the model (say no and tell me what to do instead)"


def _counts(diff: str) -> tuple[int, int]:
    added = sum(1 for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++"))
    removed = sum(1 for ln in diff.splitlines() if ln.startswith("-") and not ln.startswith("---"))
    return added, removed


def tests_touching(root: Path, path: str) -> list[str]:
    """Test files that import the module at `path` (by its name), at most five."""
    p = Path(path)
    if p.suffix != ".py":
        return []
    stem = p.stem
    if stem.startswith("test_") or stem == "__init__":
        return [path] if stem.startswith("test_") else []
    pattern = re.compile(rf"^\s*(?:from\s+[\w.]*\b{re.escape(stem)}\b|import\s+[\w.]*\b{re.escape(stem)}\b)",
                         re.MULTILINE)
    hits: list[str] = []
    for f in _test_files(root):
        try:
            with f.open("r", encoding="utf-8", errors="replace") as fh:
                head = fh.read(50_000)  # a huge file is not read whole
        except OSError:
            continue
        if pattern.search(head):
            hits.append(f.relative_to(root).as_posix())
            if len(hits) >= 5:
                break
    return hits


def _test_files(root: Path) -> list[Path]:
    """`test_*.py` files under `root`: no symlinks followed, hidden and vendor folders skipped,
    bounded in folders visited and time (a gate request never waits on a huge tree)."""
    found: list[Path] = []
    deadline = time.monotonic() + WALK_SECONDS
    visited = 0
    for top, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS]
        visited += 1
        for name in files:
            if name.startswith("test_") and name.endswith(".py"):
                f = Path(top) / name
                if not f.is_symlink() and f.is_file():
                    found.append(f)
        if len(found) >= TESTS_SCANNED or visited >= DIRS_VISITED or time.monotonic() > deadline:
            break
    return found


def impact_of(call: ToolCall, root: Path, diff: str) -> str:
    """One line: files, lines +/-, undoable or not, tests affected."""
    a = call.arguments
    name = call.name
    if name in ("execute_shell", "run_tests"):
        what = "runs the test suite" if name == "run_tests" else f"runs `{a.get('command') or a.get('cmd') or ''}`"
        return f"{what} in the workspace; not undoable (a command's effects are not checkpointed)"
    path = str(a.get("path") or a.get("src") or "")
    parts = [f"1 file ({path})" if path else "the workspace"]
    if name == "move_path":
        parts[0] = f"renames {a.get('src', '')} → {a.get('dst', '')}"
    elif diff:
        added, removed = _counts(diff)
        parts.append(f"+{added} −{removed} lines")
    parts.append("undoable with `duckflow undo` (a checkpoint is taken)" if name in UNDOABLE else "not undoable")
    tests = tests_touching(root, path) if path else []
    parts.append("tests affected: " + ", ".join(tests) if tests else "no test imports it")
    return "; ".join(parts)


def edit_preview(path: str, old: str, content: str, unified: Callable[[str, str | None, str | None], str]) -> str:
    """The diff of an edit_file call; when a hunk would not apply: why, and the closest real lines."""
    from duckflow.protocols.editblocks import apply_hunks, parse_hunks

    hunks = parse_hunks(content)
    if hunks is None:
        return unified(path, old, content)
    applied = apply_hunks(old, hunks)
    if applied.ok:
        return unified(path, old, applied.text)
    lines = [f"THIS EDIT WOULD FAIL: {len(applied.failures)} of {len(hunks)} hunk(s) do not match {path}"]
    for f in applied.failures:
        lines.append(f"hunk {f.index + 1}: {f.reason}")
        if f.closest:
            lines.append(f"closest lines in {path} (line {f.closest_line}):")
            lines += [f"    {ln}" for ln in f.closest.splitlines()[:8]]
    partial = unified(path, old, applied.text) if applied.applied else ""
    return "\n".join(lines) + (f"\n{partial}" if partial else "")


_DATA = (".txt", ".csv", ".tsv", ".json", ".jsonl", ".xml", ".yaml", ".yml", ".md", ".log", ".dat")
_CODE_LINE = re.compile(r"^\s*(import \w|from \w+ import |def \w+\(|class \w+|with open\(|print\(|for \w+ in )")


def _code_into_data(path: str, old: str, new: str) -> bool:
    """A data file whose every line is replaced by lines of Python (a small model asked to make
    main.py print data.txt wrote its code into data.txt, under auto-approve)."""
    if not path.lower().endswith(_DATA) or any(_CODE_LINE.match(ln) for ln in old.splitlines()):
        return False
    return sum(1 for ln in new.splitlines() if _CODE_LINE.match(ln)) >= 1


def write_hazard(call: ToolCall, old: str | None, new: str | None, named: tuple[str, ...] | None) -> str | None:
    """Why a write or edit is not the small change it looks like (the gate then asks a person,
    risk high): it empties a file, removes most of it (keeps less than half of its lines and shrinks it to
    less than half: a rewrite of the same size is not a removal), replaces every line of a data file
    with program code, or changes a file the task did not name.
    `new` is the file's text after the call (None when the edit would not apply)."""
    path = str(call.arguments.get("path") or "")
    if call.name not in ("write_file", "edit_file") or not path:
        return None
    if old is not None and old.strip() and new is not None:
        before = [ln for ln in old.splitlines() if ln.strip()]
        after = [ln for ln in new.splitlines() if ln.strip()]
        if not after:
            return f"it empties {path} ({len(before)} lines removed)"
        kept = sum(1 for ln in before if ln in set(after))
        if len(before) >= 4 and kept < len(before) / 2 and len(after) < len(before) / 2:  # (a rewrite is not)
            return f"it removes most of {path} ({len(before) - kept} of {len(before)} lines)"
        if not kept and _code_into_data(path, old, new):
            return f"it replaces the data in {path} with program code ({len(before)} lines removed)"
    if named and old is not None and path not in named and Path(path).name not in named:
        return f"it changes {path}, a file the task did not name ({', '.join(named[:3])})"
    return None
