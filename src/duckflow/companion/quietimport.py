"""A module that must print nothing on import: the task's expectation, checked by importing it.

"Importing greetings.py prints things … make the demo run only when it is run as a script" names
what the result must show, with no value to compare: `python3 -c "import greetings"` prints
nothing, and (when the task says it still runs as a script) `python3 greetings.py` still prints.
A run of the script that prints, or a call of its function that returns the right value, shows
neither: a module that still prints on import had ended "Done". Both checks run (the loop runs
them itself, no model call) before such a task may end "Done", after every change. Each step
of such a task names the module's lines that run on import (`step_lines`): the 1.5B, told only
the task, was seen making no change at all before a failed check named them.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from duckflow.companion.taskchecks import TEST_FILE

_IMPORT_PRINTS = re.compile(
    r"\bimport(?:ing|ed|s)?\b(?:[^.;]|\.(?=\w))*\b(?:prints?|printing|outputs?)\b|"
    r"\b(?:prints?|printing|outputs?)\b(?:[^.;]|\.(?=\w))*\b(?:on|when|at|during|while)\s+(?:it\s+is\s+|it's\s+|being\s+)?"
    r"import(?:ed|ing)?\b", re.I)
_QUIET = re.compile(r"\b(?:not|never|nothing|no\s+longer|stops?|quiet|silent(?:ly)?|only\s+(?:when|if)|"
                    r"without\s+printing)\b|n't\b", re.I)
_AS_SCRIPT = re.compile(r"\b(?:run|runs|executed?|started)\s+(?:as\s+a\s+(?:script|program)|directly|"
                        r"from\s+the\s+command[- ]line|on\s+its\s+own)|__main__", re.I)


def quiet_import(task: str, files: list[str]) -> tuple[str, bool] | None:
    """(module, still runs as a script) when the task says importing a workspace module must print
    nothing (`importing utils.py prints 'loading'; it should not`, `only when run as a script`);
    None when it says no such thing or names no single module that is there."""
    from duckflow.protocols.filenames import plausible_paths

    guard = re.search(r"\bonly\s+(?:when|if)\b", task, re.I) and _AS_SCRIPT.search(task)
    if not ((_IMPORT_PRINTS.search(task) and _QUIET.search(task)) or guard):
        return None
    mods = [p for p in plausible_paths(task, files) if re.fullmatch(r"[A-Za-z_]\w*\.py", p) and p in files
            and not TEST_FILE.search(p) and re.search(rf"(?<![\w/.-]){re.escape(p)}(?!\w)", task)]
    if len(set(mods)) != 1:
        return None
    return mods[0][:-3], bool(_AS_SCRIPT.search(task))


def commands(session: Any, task: str) -> list[str]:
    """The checks this task's expectation needs: the import, then the script run (or none)."""
    from duckflow.companion.shownfiles import workspace_files

    found = quiet_import(task, workspace_files(session.runner.root))
    if found is None:
        return []
    mod, script = found
    return [f'python3 -c "import {mod}"'] + ([f"python3 {mod}.py"] if script else [])


def step_lines(session: Any, task: str, files: list[str]) -> list[str]:
    """A step's words for the lines of the module that still run on import ([] when none, or
    when the task does not ask for a quiet import)."""
    found = quiet_import(task, files)
    runs = top_level_runs(session.runner.read_text(f"{found[0]}.py") or "") if found else []
    if not found or not runs:
        return []
    return [f"These top-level lines of {found[0]}.py run on import: " + ", ".join(f"`{r}`" for r in runs[:4])
            + ". Move them, indented, under `if __name__ == \"__main__\":` at the end of the file."]


def top_level_runs(text: str) -> list[str]:
    """The module's top-level statements that run on import and may print (`print(hello('World'))`),
    as written: not imports, definitions, assignments, docstrings or a `__main__` block."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    quiet = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    runs = []
    for node in tree.body:
        if isinstance(node, quiet) or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            continue
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):  # (moving a value would break it)
            continue
        if isinstance(node, ast.If) and "__main__" in (ast.get_source_segment(text, node.test) or ""):
            continue
        runs.append((ast.get_source_segment(text, node) or "").splitlines()[0][:80])
    return [r for r in runs if r]


def judged(command: str, out: str, needed: list[str], read: Any = None) -> str:
    """Why a passing run of one of `needed` fails the expectation ("" when it meets it); for an
    import that printed, the module's top-level lines that ran, to move under `__main__`."""
    if command == needed[0] and out.strip():
        first = out.strip().splitlines()[0][:80]
        mod = command.split()[-1].rstrip(chr(34))
        runs = top_level_runs((read(f"{mod}.py") if read else None) or "")
        where = (f"these top-level lines of {mod}.py run on import: " + ", ".join(f"`{r}`" for r in runs[:4])
                 + ". Move them, indented, under `if __name__ == \"__main__\":` at the end of the file"
                 if runs else "put that code under `if __name__ == \"__main__\":`")
        return (f"check failed: importing {mod} printed {first!r}; the task says importing it prints nothing "
                f"({where})")
    if len(needed) > 1 and command == needed[1] and not out.strip():
        return f"check failed: {command} printed nothing; the task says it still runs as a script"
    return ""


def met_words(needed: list[str]) -> str:
    mod = needed[0].split()[-1].rstrip('"')
    return f"importing {mod} prints nothing" + (f", and {needed[1]} still prints" if len(needed) > 1 else "")
