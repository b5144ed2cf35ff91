"""Which check to run next for a task's change: the loop's own, the one that compares with the task, or a call to ask for.

When the model says DONE without a proof (companion/checks.py's CheckLog), the loop picks the
check itself: `auto_command` — the assertion the model wrote first, the command or call the task
names, the tests that import a changed module (a plain unittest file with the standard library's
runner, `test_command`), or the changed script; `expectation_command` — the check that compares
with what the task says (its output, its value, its count). A script that reads its arguments
(`argument_scripts`) or a module only a call can check (`call_targets`) is the model's to run.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from duckflow.companion import expect
from duckflow.companion.checks import CheckLog, callables
from duckflow.companion.runresult import only_definitions
from duckflow.companion.taskchecks import (
    TEST_FILE,
    listed_output,
    quoted_output,
    task_call,
    task_command,
)


def auto_command(session: Any, log: CheckLog, files: list[str]) -> str | None:
    """The check the loop runs itself: the assertion written first; the tests that import a changed
    module (or a changed test), which are the task's expectation where they exist; the command or
    call the task names; else a changed script that shows something when run. None when only a
    call can prove it."""
    if log.expect_cmd and log.expect_cmd not in log.auto_tried:
        return log.expect_cmd  # the assertion written first: the task's expectation
    tests = [test_command(p, session.runner.read_text(p) or "") for p in log.changed if TEST_FILE.search(p)]
    mods = {PurePosixPath(p).stem for p in log.changed}
    for test in (f for f in files if TEST_FILE.search(f)):
        text = session.runner.read_text(test) or ""
        if any(re.search(rf"^\s*(from|import)\s+{re.escape(m)}\b", text, re.M) for m in mods):
            tests.append(test_command(test, text))
    for command in tests:  # the tests come first: where a test of the change exists, it is the task's
        if command not in log.auto_tried:  # expectation (a call the task names with its value is
            return command  # compared after it, by expectation_command, before the task may end)
    named = task_command(log.task, log.changed) or task_call(session, log.task, log.changed)
    if named and named[0] not in log.auto_tried:
        return named[0]
    for path in log.changed:
        text = session.runner.read_text(path)
        if text is not None and (not only_definitions(text) or not callables(text)) and not reads_arguments(text) \
                and f"python3 {path}" not in log.auto_tried:
            return f"python3 {path}"
    return None


_PYTEST_ONLY = re.compile(r"^\s*(import pytest|from pytest\b)|@pytest\.|^def test\w*\(|^async def test", re.M)


def test_command(path: str, text: str) -> str:
    """How the loop runs a test file: a plain unittest file with the standard library's runner
    (no plugins to load: a fraction of a second where pytest took seconds on a busy machine),
    anything else with pytest."""
    if "unittest.TestCase" in text and not _PYTEST_ONLY.search(text):
        return f"python3 -m unittest -q {path}"
    return f"python3 -m pytest -q {path}"


def expectation_command(session: Any, log: CheckLog) -> str | None:
    """The check that compares with what the task names: its command with the output it gives,
    its call with the value, the assertion written first, a script whose output it quotes or lists."""
    files = log.written or log.changed
    named = task_command(log.task, files)
    called = task_call(session, log.task, files)
    for found in (named, called):
        if found and found[1]:
            return found[0]
    if log.expect_cmd:
        return log.expect_cmd
    count = expect.counted(log.task, session.runner.read_text)
    for path in files:
        if path.endswith(".py") and (quoted_output(log.task, path) or listed_output(log.task, path) or count
                                     or expect.said_number(log.task, path)):
            argument = (" " + count[0].split()[-1]) if count and reads_arguments(
                session.runner.read_text(path) or "") else ""
            return f"python3 {path}{argument}"
    return None


def reads_arguments(text: str) -> bool:
    """A script that needs command-line arguments (run bare, it would fail for that alone)."""
    return "sys.argv" in text or "argparse" in text


def argument_scripts(session: Any, log: CheckLog) -> list[str]:
    """Changed scripts that read their arguments: the model runs them, with sample arguments."""
    return [p for p in log.changed if reads_arguments(session.runner.read_text(p) or "")]


def call_targets(log: CheckLog) -> list[str]:
    """Changed modules that only a call of their function can check (`import m` names)."""
    return [PurePosixPath(p).stem for p in log.changed
            if "/" not in p and re.fullmatch(r"[A-Za-z_]\w*", PurePosixPath(p).stem)]
