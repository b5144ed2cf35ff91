"""The tests beside the code a task changes, as a step shows them: their asserts, short, before the first reply.

A task that points at a stub and its unittest file ("modify the supplied files: leap.py", with
leap_test.py beside it) is judged by those tests. A small model that sees only the task's prose
guesses the names, the return values and the error messages, and its first reply fails; the
asserts say them. The step shows the bodies of the test methods (one block per test, the test's
name dropped), each shape of assert once before any repeats, within a character budget; the
test file stays the task's expectation, read-only (companion/expect.py). After a failed run,
`failed_words` says a failed test from its source where the run's output does not: an
`assertRaises` test as its call and what it raised against the error the test expects, and an
`assertEqual` over several lines (unittest shows only `self.assertEqual(`) as its call, what it
returned and what the test expects.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import PurePosixPath

from duckflow.companion.taskchecks import TEST_FILE

DIGEST_CHARS = 1200
_TEST_DEF = re.compile(r"^(\s*)def (test\w*)\(")
_SKIP = re.compile(r"^self\.assert(Equal|Is)\(type\(err\.exception\)|^#|^\"\"\"|^'''")
_LITERAL = re.compile(r"\"[^\"\n]*\"|'[^'\n]*'|-?\d+(\.\d+)?")


def blocks(text: str) -> list[str]:
    """The body of each test method, dedented, a statement over several lines joined into one
    (comments and the exception's type check dropped: the `assertRaises` says it)."""
    found: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _TEST_DEF.match(lines[i])
        if not m:
            i += 1
            continue
        indent = len(m.group(1))
        body: list[str] = []
        base = -1
        depth = 0
        i += 1
        while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
            raw = lines[i]
            i += 1
            line = raw.strip()
            if not line:
                continue
            if depth > 0 and body:  # inside brackets: the same statement goes on
                body[-1] += ("" if body[-1].endswith(("(", "[", "{")) or line.startswith((")", "]", "}"))
                             else " ") + line
            else:
                base = len(raw) - len(raw.lstrip()) if base < 0 else base
                body.append(" " * max(0, len(raw) - len(raw.lstrip()) - base) + line)
            depth = max(0, depth + sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}"))
        body = [b.replace(",)", ")").replace(", )", ")") for b in body if not _SKIP.match(b.strip())]
        if body:
            found.append("\n".join(body))
    return found


def digest(text: str, limit: int = DIGEST_CHARS) -> str:
    """The test blocks that fit in `limit` characters: the first of each shape (its literals
    aside) first, then the others, shown in the file's order, with how many were left out."""
    every = blocks(text)
    chosen: set[int] = set()
    used = 0
    shapes: set[str] = set()
    for first_pass in (True, False):
        for i, block in enumerate(every):
            shape = _LITERAL.sub("_", block)
            if i in chosen or (first_pass and shape in shapes):
                continue
            shapes.add(shape)
            if used + len(block) + 1 <= limit:
                chosen.add(i)
                used += len(block) + 1
    shown = "\n".join(every[i] for i in sorted(chosen))
    left = len(every) - len(chosen)
    return shown + (f"\n(… {left} more test{'s' * (left != 1)} not shown)" if left else "")


def beside(files: list[str], shown: list[str], read: Callable[[str], str | None]) -> dict[str, str]:
    """Test files (not shown already) that import a shown code module, with their digests."""
    mods = {PurePosixPath(p).stem for p in shown if p.endswith(".py") and not TEST_FILE.search(p)}
    out: dict[str, str] = {}
    for f in files:
        if f in shown or not TEST_FILE.search(f) or not mods:
            continue
        text = read(f) or ""
        if any(re.search(rf"^\s*(from|import)\s+{re.escape(m)}\b", text, re.M) for m in mods):
            got = digest(text)
            if got:
                out[f] = got
    return out


def lines_of(tests: dict[str, str]) -> list[str]:
    """The step's words for them: the asserts the change must pass, not to be changed."""
    return [f"The tests in {path} (they judge the result; do not change them):\n---\n{text}\n---"
            for path, text in tests.items()]


_MESSAGE = re.compile(r"AssertionError: (.+?) != (.+?)(?: : .*)?$")
_NOT_RAISED = re.compile(r"AssertionError: (\w+) not raised")


_UNREADABLE = (SyntaxError, ValueError, RecursionError, MemoryError)  # a test file built to break a parser


def _tree(source: str) -> ast.Module | None:
    """The test file parsed, or None when it cannot be (its words then say no more than the run)."""
    try:
        return ast.parse(source)
    except _UNREADABLE:
        return None


def _raising(source: str, name: str) -> tuple[str, str, str] | None:
    """(the call, the exception, its message as the test writes it) of test `name`'s first
    `with self.assertRaises(E) as err: CALL` checked with `assertEqual(err.exception.args[0], MSG)`."""
    tree = _tree(source)
    if tree is None:
        return None
    test = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name), None)
    for node in ast.walk(test) if test else ():
        if not isinstance(node, ast.With) or not node.items or not node.body:
            continue
        ctx, body = node.items[0].context_expr, node.body[0]
        if not (isinstance(ctx, ast.Call) and isinstance(ctx.func, ast.Attribute) and ctx.args
                and ctx.func.attr.startswith("assertRaises") and isinstance(body, ast.Expr)):
            continue
        message = ""
        for check in ast.walk(test):  # type: ignore[arg-type]
            if isinstance(check, ast.Call) and isinstance(check.func, ast.Attribute) and \
                    check.func.attr == "assertEqual" and len(check.args) == 2 and \
                    ast.unparse(check.args[0]).endswith("exception.args[0]"):
                message = ast.unparse(check.args[1])
        return ast.unparse(body.value), ast.unparse(ctx.args[0]), message
    return None


def raised_words(source: str, name: str, said: str) -> str:
    """A failed `assertRaises` test as what its call did against the error the test expects:
    "slices('', 1) raised ValueError('slice length cannot be greater than series length'), but the
    test expects ValueError('series cannot be empty')"; "" when the test is not of that shape."""
    try:
        found = _raising(source, name)
    except _UNREADABLE:
        found = None
    if found is None:
        return ""
    call, exc, message = found
    wanted = f"{exc}({message})" if message else exc
    if _NOT_RAISED.match(said):
        return f"{call} raised no error, but the test expects {wanted}"
    got = _MESSAGE.match(said)
    if got and message:
        return f"{call} raised {exc}({got.group(1)}), but the test expects {wanted}"
    if re.match(r"^\w*(Error|Exception)\b", said):  # another error escaped the call
        return f"{call} raised {said[:120]}, but the test expects {wanted}"
    return ""


def failed_words(source: str, name: str, said: str, line: int = 0) -> str:
    """A failed test said from its source: `raised_words`, else the `assertEqual(CALL, WANTED)`
    at `line` (unittest's frame line) as "CALL returned GOT, but the test expects WANTED"; ""
    when the source says no more than the run did."""
    raised = raised_words(source, name, said)
    got = _MESSAGE.match(said)
    if raised or not got or line <= 0:
        return raised
    tree = _tree(source)
    for node in ast.walk(tree) if tree is not None else ():
        if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and node.lineno == line):
            continue
        call = node.value
        if isinstance(call.func, ast.Attribute) and call.func.attr == "assertEqual" and len(call.args) >= 2 \
                and isinstance(call.args[0], ast.Call):
            try:
                return (f"{ast.unparse(call.args[0])} returned {got.group(1)}, but the test expects "
                        f"{ast.unparse(call.args[1])}")
            except _UNREADABLE:
                return ""
    return ""
