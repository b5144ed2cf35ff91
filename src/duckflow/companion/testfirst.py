"""Test first: where the task names no result, the model writes the assertion the change must pass, before the change.

"The mean function in stats.py gives wrong results. Fix it." names no value to compare with, so
any check the model picks after the change only shows that the code runs. Before it edits, the
step asks for one assertion of a call of the function the task names, with an example whose
right answer the model knows — `python3 -c "import stats; got = stats.mean([1, 2, 3]); assert
got == 2, got"` — and the step's grammar allows exactly that shape. The loop runs it on the code
as it is: for a fix it must fail there (an assertion the old code passes tells nothing about the
change, and is dropped); failing, it is the task's expectation (`CheckLog.expect_cmd`), run again
after the change, and the only thing that can make the ending "Done".

The same holds for a new module ("Create calc.py with a function add(a, b) that returns the sum"):
the task names the function and says it returns or prints something, but no value to compare
with. The assertion comes first here too; on no code it could only fail to import, so it is not
run but kept (`hold`) and runs once the module is written. In the two-call turn the Specialized
prompt asks for it the same way (`asked_first`), without a grammar to hold the model to it.
"""

from __future__ import annotations

import builtins
import re
from typing import Any, NamedTuple

from duckflow.companion import expect
from duckflow.companion.taskchecks import (
    TEST_FILE,
    asks_change,
    listed_output,
    quoted_output,
    task_call,
    task_command,
)

# an error of the code as it is (the behaviour is missing: the check fails, as it should) against
# one of the call itself (its arguments do not fit, the module or the name is not there)
_RAISED = re.compile(r"^\w*(Error|Exception)\b")
_NOT_RUN = re.compile(r"^(TypeError|NameError|SyntaxError|ImportError|ModuleNotFoundError|IndentationError)\b")
ASSERTION = re.compile(r'^python3 -c "import (\w+); got = \1\.(\w+)\((.*)\); assert got == (.+), got"$')
_STATES = re.compile(r"\b(returns?|prints?|gives?|outputs?|computes?|calculates?|counts?)\b", re.I)
_NOT_NAMES = {"a", "an", "the", "new", "small", "simple", "helper", "python", "single", "short", "one", "this", "that",
              "to", "in", "for", "of", "with", "which", "so", "and", "it", "its", "there", "here"}


class Target(NamedTuple):
    module: str
    fn: str
    new: bool = False  # the module is not written yet: the assertion is kept, not run first


def target(session: Any, log: Any) -> Target | None:
    """(module, function) to write the assertion for, when the task gives no expectation of its
    own and asks to change an existing module that defines the function it names, or to write a
    new module with a function it names and says returns or prints something; else None."""
    from duckflow.companion.shownfiles import workspace_files
    from duckflow.protocols.filenames import plausible_paths

    task = log.task
    if log.asked_expect or log.written or log.expect_cmd or not asks_change(task):
        return None
    files = workspace_files(session.runner.root)
    named = [p for p in plausible_paths(task, files) if p.endswith(".py") and "/" not in p]
    if any(TEST_FILE.search(p) for p in named) or any(TEST_FILE.search(f) for f in files):
        return None  # tests are there: they are the expectation
    code = [p for p in named if p in files and re.fullmatch(r"[A-Za-z_]\w*\.py", p)]
    if not code:
        return _new_target(session, task, [p for p in named if re.fullmatch(r"[A-Za-z_]\w*\.py", p)])
    if task_command(task, code) or task_call(session, task, code) \
            or expect.counted(task, session.runner.read_text) \
            or any(quoted_output(task, p) or listed_output(task, p) for p in code):
        return None
    text = session.runner.read_text(code[0]) or ""
    defs = re.findall(r"^def ([A-Za-z_]\w*)\(", text, re.M)
    fn = next((f for f in defs if re.search(rf"\b{re.escape(f)}\b", task)), "")
    return Target(code[0][:-3], fn) if fn else None


def _new_target(session: Any, task: str, new: list[str]) -> Target | None:
    """A module the task asks to write, with the function it names and says returns or prints
    something, when it writes no value of its own (`add(2, 3) should return 5` is one)."""
    if len(new) != 1 or not _STATES.search(task) or task_command(task, new) \
            or expect.counted(task, session.runner.read_text) or quoted_output(task, new[0]) or listed_output(task, new[0]):
        return None
    fn = function_named(task)
    return Target(new[0][:-3], fn, True) if fn and not _writes_value(task, fn) else None


def _writes_value(task: str, fn: str) -> bool:
    """The task writes a call of `fn` with literal arguments and the value it gives (`add(2, 3)
    should return 5`): that is the expectation. `fizzbuzz(n) returns 'Fizz' …` is not one."""
    import ast

    if expect.templated(task, fn):  # `greet(name) that returns 'Hello, NAME!'`: compared as it is
        return True
    for m in re.finditer(rf"\b{re.escape(fn)}\(([^()]*)\)[^.;]*?\b(?:returns?|gives?|==|should be|is|equals?)\s+"
                         r"[-\d'\"\[({]", task):
        try:
            ast.literal_eval(f"({m.group(1)},)" if m.group(1).strip() else "()")
        except (ValueError, SyntaxError):
            continue
        return True
    return False


def function_named(task: str) -> str:
    """The function a task asks for: `add(a, b)`, "a function called add", "the add function"."""
    for call in re.finditer(r"(?<![\w.])([A-Za-z_]\w*)\(", task):
        if not hasattr(builtins, call.group(1)):
            return call.group(1)
    for pattern in (r"\bfunction\s+(?:called|named)\s+`?([A-Za-z_]\w*)",
                    r"\b(?:a|an|the)\s+`?([A-Za-z_]\w*)`?\s+function\b", r"\bfunction\s+`?([A-Za-z_]\w*)"):
        m = re.search(pattern, task, re.I)
        if m and m.group(1).lower() not in _NOT_NAMES:
            return m.group(1)
    return ""


def ask_lines(module: str, fn: str, new: bool = False, *, symops: bool = True) -> list[str]:
    shape = f"python3 -c \"import {module}; got = {module}.{fn}(...); assert got == ..., got\""
    then = (f"the loop keeps it and runs it once you have written {module}.py" if new
            else "it runs on the code as it is; then you fix the code")
    return [f"Before {'writing' if new else 'changing'} anything, write the check the result must pass: call {fn} "
            "with a small example whose right answer you know, and assert that answer, as "
            + (f"$ run @ {shape}" if symops else f"the command `{shape}`")
            + f" with real values for ... ({then})."]


def asked_first(session: Any, log: Any) -> str:
    """The test-first request in the two-call turn's Specialized prompt ("" when none is owed)."""
    first = target(session, log) if "execute_shell" in session.runner.tool_names else None
    if first is None:
        return ""
    log.asked_expect += 1
    return "\n\n" + " ".join(ask_lines(*first, symops=False)) + " Only that command in this reply."


def hold(log: Any, call: Any, read: Any) -> str:
    """The assertion written first for a module not written yet: kept as the task's expectation,
    not run (on no code it can only fail to import). The line said, or "" for any other call."""
    m = ASSERTION.match(str(call.arguments.get("command") or "")) if call.name == "execute_shell" else None
    if not m or not log.asked_expect or log.expect_cmd or log.written or read(f"{m.group(1)}.py") is not None:
        return ""
    log.expect_cmd, log.expect_says = m.group(0), f"{m.group(2)}({m.group(3)}) == {m.group(4)}"
    return f"The check the result must pass: {log.expect_says} (kept; it runs once {m.group(1)}.py is written)."


def reminder(log: Any) -> list[str]:
    """The assertion written first, said again while nothing has run it since the last change."""
    if log.expect_cmd and log.passed is None and not log.met:
        return [f"The result must pass the check written first: {log.expect_says} (the loop runs it after your change)."]
    return []


def grammar(base: str, module: str, fn: str, new: bool = False) -> str:
    """The step's grammar narrowed to that one assertion (literal arguments and value only: numbers,
    short strings, lists, dicts — a function that counts words returns a dict); a new module's alike."""
    from duckflow.protocols.grammar import literal

    head = literal(f'$ run @ python3 -c "import {module}; got = {module}.{fn}(')
    base = re.sub(r"^action ::= .*$", "action ::= assertrun", base, count=1, flags=re.M)
    base = re.sub(r"action\{\d+,\d+\}", "action", base, count=1)
    return base + (f'assertrun ::= {head} aargs? "); assert got == " aval ", got\\"\\n"\n'
                   'aargs ::= aval ( ", " aval ){0,3}\n'
                   'aval ::= anum ( "." [0-9]{1,4} )? | "\'" [A-Za-z0-9 ,.!?_-]{0,24} "\'" '
                   '| "[" ( aval ( ", " aval ){0,6} )? "]" | "True" | "False" | "None" '
                   '| "{" ( akey ": " aval ( ", " akey ": " aval ){0,5} )? "}"\n'
                   'akey ::= anum | "\'" [A-Za-z0-9 ,.!?_-]{0,24} "\'"\n'
                   'anum ::= "-"? ( "0" | [1-9] [0-9]{0,5} )\n')


def noted(log: Any, command: str, code: int | None, err: str) -> str | None:
    """The assertion's first run, on the code as it is: "" when it became the expectation (it
    failed, as it should), a `not checked` line when it is dropped, None when `command` is not it."""
    m = ASSERTION.match(command)
    if not m or not log.asked_expect or log.expect_cmd or log.written:
        return None
    says = f"{m.group(2)}({m.group(3)}) == {m.group(4)}"
    if code == 0:
        return f"not an expectation: {says} holds already for the code as it is"
    last = err.strip().splitlines()[-1][:120] if err.strip() else "no output"
    if "AssertionError" not in err and (_NOT_RUN.match(last) or not _RAISED.match(last)):
        return f"not an expectation: {says} did not run ({last})"  # the call's fault, not the code's
    log.expect_cmd, log.expect_says = command, says
    return ""


def failed_words(log: Any, command: str, err: str) -> str:
    """`mean([1, 2, 3]) == 2, but it gave 3.0` for a failed run of the expectation ("" for another)."""
    if not log.expect_cmd or command != log.expect_cmd:
        return ""
    got = next((ln.split(":", 1)[1].strip() for ln in reversed(err.splitlines())
                if ln.startswith("AssertionError:")), "")
    if got or "AssertionError" in err:
        return f"the task's check {log.expect_says} fails: it gave {got or 'something else'}"
    last = err.strip().splitlines()[-1][:120] if err.strip() else ""
    return f"the task's check {log.expect_says} fails: it raised {last}" if _RAISED.match(last) else ""
