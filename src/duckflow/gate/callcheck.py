"""A function call check, `python3 -c "import m; print(m.f(2, 'a'))"`: inline code the gate can read.

Inline code is hard-required (the gate cannot see into it), but this one shape is what a
coding agent runs to check a function it wrote: it imports one workspace module and prints
one call of one of its functions with literal arguments. It runs nothing but that module's
text, so it is judged as `python3 m.py` is — by the module's text (gate/scripts.py) — and
any other inline code stays hard-required.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Any


def call_check_module(args: Sequence[str]) -> str | None:
    """The module name when `python ARGS` is exactly `-c "import M; print(M.F(LITERALS))"`."""
    if len(args) != 2 or args[0] != "-c":
        return None
    try:
        body = ast.parse(args[1]).body
    except (SyntaxError, ValueError):
        return None
    if len(body) != 2 or not isinstance(body[0], ast.Import) or not isinstance(body[1], ast.Expr):
        return None
    names = body[0].names
    if len(names) != 1 or names[0].asname or "." in names[0].name:
        return None
    module = names[0].name
    show = body[1].value
    if not (isinstance(show, ast.Call) and isinstance(show.func, ast.Name) and show.func.id == "print"
            and len(show.args) == 1 and not show.keywords):
        return None
    call = show.args[0]
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ast.Name) and call.func.value.id == module and not call.keywords):
        return None
    for arg in call.args:
        try:
            ast.literal_eval(arg)
        except ValueError:
            return None
    return module


def workspace_call_check(guard: Any, command: str) -> bool:
    """True when `command` is exactly `python3 -c "import M; print(M.F(…))"` and M is a module
    file of the workspace (`M.py`; run from the workspace, it is what `import M` loads): a
    stdlib or installed module (`import shutil; print(shutil.rmtree('src'))`) is never one."""
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if not words or words[0] not in ("python", "python3"):
        return False
    module = call_check_module(words[1:])
    if module is None:
        return False
    verdict = guard.check(f"{module}.py", "read")
    return bool(verdict.allowed and verdict.resolved is not None and verdict.resolved.is_file())
