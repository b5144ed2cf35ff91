"""Test first: where the task names no result, the model writes the assertion the change must pass, before the change.

"The mean function in stats.py gives wrong results. Fix it." names no value to compare with, so
any check the model picks after the change only shows that the code runs. Before it edits, the
step asks for one assertion of a call of the function the task names, with an example whose
right answer the model knows — `python3 -c "import stats; got = stats.mean([1, 2, 3]); assert
got == 2, got"` — and the step's grammar allows exactly that shape. The loop runs it on the code
as it is: for a fix it must fail there (an assertion the old code passes tells nothing about the
change, and is dropped); failing, it is the task's expectation (`CheckLog.expect_cmd`), run again
after the change, and the only thing that can make the ending "Done".
"""

from __future__ import annotations

import re
from typing import Any

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


def target(session: Any, log: Any) -> tuple[str, str] | None:
    """(module, function) to write the assertion for, when the task gives no expectation of its
    own and asks to change an existing module that defines the function it names; else None."""
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
    if not code or task_command(task, code) or task_call(session, task, code) \
            or expect.counted(task, session.runner.read_text) \
            or any(quoted_output(task, p) or listed_output(task, p) for p in code):
        return None
    text = session.runner.read_text(code[0]) or ""
    defs = re.findall(r"^def ([A-Za-z_]\w*)\(", text, re.M)
    fn = next((f for f in defs if re.search(rf"\b{re.escape(f)}\b", task)), "")
    return (code[0][:-3], fn) if fn else None


def ask_lines(module: str, fn: str) -> list[str]:
    return [f"Before changing anything, write the check the result must pass: call {fn} with a small "
            "example whose right answer you know, and assert that answer, as "
            f"$ run @ python3 -c \"import {module}; got = {module}.{fn}(...); assert got == ..., got\" "
            "with real values for ... (it runs on the code as it is; then you fix the code)."]


def grammar(base: str, module: str, fn: str) -> str:
    """The step's grammar narrowed to that one assertion (literal arguments and value only: numbers,
    short strings, lists, dicts — a function that counts words returns a dict)."""
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
