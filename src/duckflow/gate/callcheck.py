"""A function call check, `python3 -c "import m; print(m.f(2, 'a'))"`: inline code the gate can read.

Inline code is hard-required (the gate cannot see into it), but this one shape is what a
coding agent runs to check a function it wrote: it imports one workspace module and prints
one call of one of its functions with literal arguments. It runs nothing but that module's
text, so it is judged as `python3 m.py` is — by the module's text (gate/scripts.py) — and
any other inline code stays hard-required. The assertion a task's check is written as first
(companion/testfirst.py), `import m; got = m.f(2); assert got == 4, got`, is the same call
compared with one literal, and judged the same way. So is the bare import, `import m`, that checks
a module prints nothing on import (companion/quietimport.py): it runs only the module's text.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Any


def call_check_module(args: Sequence[str]) -> str | None:
    """The module name when `python ARGS` is exactly `-c "import M; print(M.F(LITERALS))"` (or
    its assertion form, or the bare `-c "import M"`)."""
    if len(args) != 2 or args[0] != "-c":
        return None
    try:
        body = ast.parse(args[1]).body
    except (SyntaxError, ValueError):
        return None
    if len(body) not in (1, 2, 3) or not isinstance(body[0], ast.Import):
        return None
    names = body[0].names
    if len(names) != 1 or names[0].asname or "." in names[0].name:
        return None
    module = names[0].name
    if len(body) == 1:
        return module
    if len(body) == 3:
        return module if _asserted_call(body[1], body[2], module) else None
    if not isinstance(body[1], ast.Expr):
        return None
    show = body[1].value
    if not (isinstance(show, ast.Call) and isinstance(show.func, ast.Name) and show.func.id == "print"
            and len(show.args) == 1 and not show.keywords):
        return None
    return module if _literal_call(show.args[0], module) else None


def _literal_call(call: ast.expr, module: str) -> bool:
    """`M.F(LITERALS)`: one function of the module, literal arguments only."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ast.Name) and call.func.value.id == module and not call.keywords):
        return False
    return all(_literal(arg) for arg in call.args)


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):  # `{[1]: 2}`: unhashable, not a value
        return False
    return True


def _asserted_call(bind: ast.stmt, check: ast.stmt, module: str) -> bool:
    """`got = M.F(LITERALS)` then `assert got == LITERAL, got`."""
    if not (isinstance(bind, ast.Assign) and len(bind.targets) == 1 and isinstance(bind.targets[0], ast.Name)
            and _literal_call(bind.value, module)):
        return False
    name = bind.targets[0].id
    test = check.test if isinstance(check, ast.Assert) else None
    return bool(isinstance(check, ast.Assert) and isinstance(test, ast.Compare) and len(test.ops) == 1
                and isinstance(test.ops[0], ast.Eq) and isinstance(test.left, ast.Name) and test.left.id == name
                and _literal(test.comparators[0]) and isinstance(check.msg, ast.Name) and check.msg.id == name)


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
