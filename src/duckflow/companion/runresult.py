"""What a command's result says: its exit code and output, the line that names its error, and whether it proved anything.

The check log (companion/checks.py) reads each run through these: `run_result` parses the tool's
JSON, `first_error` finds the line a fix needs (a failed pytest assert said as what the call
returned and what the test expects), `only_definitions` tells a module that shows nothing when
run, `failed_run` a result that exited non-zero, `call_mismatch` a call check whose arguments do
not fit its function (the call's fault, not the code's).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable

_MISMATCH = re.compile(r"TypeError: \w+\(\) (takes \d+ positional arguments? but \d+ (were|was) given|"
                       r"missing \d+ required positional arguments?|got an unexpected keyword argument)")


def run_result(content: str) -> tuple[int | None, str, str]:
    """(exit code, stdout, stderr) of a command's JSON result; exit None when it timed out or
    the content is not a command result."""
    try:
        data = json.loads(content)
    except ValueError:
        return None, "", content
    if not isinstance(data, dict) or "exit_code" not in data:
        return None, "", content
    code = None if data.get("timed_out") else data.get("exit_code")
    return code, str(data.get("stdout") or ""), str(data.get("stderr") or "")


def first_error(stdout: str, stderr: str) -> str:
    """The line that names the error: a traceback's last line, a failed test, else the last line.
    A failed pytest test is named with its first `E` line in full (pytest's summary line cuts the
    values an assert compared, which is what a fix needs: `assert 'Hello-World' == 'h...`)."""
    for text in (stderr, stdout):
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        failed = next((ln for ln in lines if ln.startswith("FAILED ")), "")
        said = next((ln[1:].strip() for ln in lines if re.match(r"^E\s+\S", ln)), "")
        if failed and said:  # with the test's line that failed (pytest marks it with ">")
            at = next((ln[1:].strip() for ln in lines if re.match(r"^>\s+\S", ln)), "")
            return f"{failed.split(' - ', 1)[0]} - {compared(at, said)}"[:240]
        named = [ln for ln in lines if re.match(r"^(\w+(\.\w+)*(Error|Exception)|FAILED|E |SyntaxError)", ln)]
        if named:
            return named[-1][:160]
        if lines:
            return lines[-1][:160]
    return "no output"


def compared(at: str, said: str) -> str:
    """A failed `assert CALL == WANTED` said as what the call returned and what the test expects
    ("slugify('Hello World') returned 'Hello-World', but the test expects 'hello-world'"), from the
    test's line and pytest's `E assert GOT == WANTED`; else the error with the test's line."""
    line = re.match(r"assert\s+(.+?)\s*==\s*(.+)$", at)
    got = re.match(r"(?:AssertionError:\s*)?assert\s+(.+?)\s*==\s*(.+)$", said)
    if line and got and got.group(2).strip() == line.group(2).strip() and "(" in line.group(1):
        return f"{line.group(1)} returned {got.group(1)}, but the test expects {line.group(2)}"
    unit = _unittest_compared(at, said)
    if unit:
        return unit
    return f"{said} (at `{at}`)" if at and at not in said else said


def _unittest_compared(at: str, said: str) -> str:
    """`self.assertEqual(f(2), 4)` failing with `AssertionError: 5 != 4` (or `assertIs`: `True is
    not False`) said as "f(2) returned 5, but the test expects 4"; "" for anything else."""
    m = re.match(r"AssertionError: (.+?) (?:!=|is not) (.+?)(?: : .*)?$", said)
    if not m or not re.match(r"self\.assert(Equal|Is)\(", at):
        return ""
    try:
        call = ast.parse(at).body[0].value  # type: ignore[attr-defined]
        args = [ast.unparse(a) for a in call.args]
    except (SyntaxError, IndexError, AttributeError):
        return ""
    if len(args) < 2 or "(" not in args[0]:
        return ""
    return f"{args[0]} returned {m.group(1)}, but the test expects {args[1]}"


def only_definitions(text: str) -> bool:
    """A module whose top level only imports and defines (running it shows nothing)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return False
    quiet = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
             ast.Assign, ast.AnnAssign)
    return all(isinstance(n, quiet) or (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))
               for n in tree.body)


def failed_run(content: str) -> bool:
    """A command result (JSON from execute_shell / run_tests, or its evidence line
    `… → ok: exit N; …`) that exited non-zero or timed out."""
    if re.search(r"→ \w+: (exit (-?[1-9]|None)|timed out)\b", content):
        return True
    if '"exit_code"' not in content:
        return False
    code, _, _ = run_result(content)
    return code != 0


def call_mismatch(command: str, out: str, err: str) -> str:
    """The error of a call check whose arguments do not fit the function it calls ("" if not)."""
    if not command.startswith('python3 -c "import '):
        return ""
    error = first_error(out, err)
    return error if _MISMATCH.search(error) else ""


_PYTEST_SECTION = re.compile(r"^_{3,} (?:\w+\.)?(test\w*) _{3,}$")
_UNITTEST_BLOCK = re.compile(r"^(?:FAIL|ERROR): (test\w*) \(")
_RAISED = re.compile(r"^[\w.]*(Error|Exception|Exit)\b|^[\w.]*Warning:")


def failures(stdout: str, stderr: str, limit: int = 3,
             explain: Callable[[str, str, int], str] | None = None) -> list[str]:
    """The first `limit` failed tests of a pytest or unittest run, each as `test: the test's line
    → the error` (what a fix needs to see all at once), with how many more; [] when none is named.
    `explain(test, error, line)` may say a test's failure better from the test's source (unittest
    names the line of a statement over several lines by its first: `self.assertEqual(`)."""
    found: list[tuple[str, str, str, int]] = []
    lines = (stdout + "\n" + stderr).splitlines()
    i = 0
    while i < len(lines):
        head = _PYTEST_SECTION.match(lines[i].strip()) or _UNITTEST_BLOCK.match(lines[i])
        if not head:
            i += 1
            continue
        name, at, said, line_no = head.group(1), "", "", 0
        i += 1
        while i < len(lines) and not (_PYTEST_SECTION.match(lines[i].strip()) or _UNITTEST_BLOCK.match(lines[i])
                                      or lines[i].startswith("=====") or lines[i].startswith("Ran ")):
            line = lines[i]
            if line.startswith(">"):  # pytest: the test's line that failed
                at = line[1:].strip()
            elif (frame := re.match(r'^\s+File ".*", line (\d+), in ' + re.escape(name) + r"$", line)) \
                    and i + 1 < len(lines):
                at, line_no = lines[i + 1].strip(), int(frame.group(1))  # unittest: the test's own frame
            elif not said and (re.match(r"^E\s+\S", line) or _RAISED.match(line)):
                said = line[1:].strip() if line.startswith("E ") else line.strip()
            i += 1
        if said and all(said != s for _, _, s, _ in found):  # the same error again says nothing new
            found.append((name, at, said, line_no))
    shown = [f"{name}: {(explain and explain(name, said, n)) or compared(at, said)}"[:240]
             for name, at, said, n in found[:limit]]
    more = len(found) - limit
    return shown + ([f"(and {more} more failing with other errors)"] if more > 0 else [])
