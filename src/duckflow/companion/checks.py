"""Check, then fix: what proved a task's change works (the check log), the task's tests kept, and the ending's words.

A write or edit is not the end of a task: the result must be checked by running it. Each tool
result is noted here (`note`): a change makes the task unchecked; a run that exits 0 proves it
only when it shows something (output, passing tests, a call of the function) — running a
module that only defines functions exits 0 with no output and proves nothing. When the model
says DONE without such a proof, the loop picks the check itself or asks the model for a short
call of the function the task names (companion/nextcheck.py). A failed check goes back to the
model with its first error, at most `MAX_FIXES` times. `ending` is the line the result says:
`checked: python3 hello.py → exit 0`, `check failed: …`, `not checked: …`. A passing check
makes the task "Done" only when its output met the task's own expectation (`CheckLog.met`, from
companion/expect.py and testfirst.py); the task's tests stay the model's to run, never to write
(`refused_test_write`).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from duckflow.companion import expect, quietimport, testfirst, testview
from duckflow.companion.runresult import (
    call_mismatch,
    failures,
    first_error,
    only_definitions,
    run_result,
)
from duckflow.companion.taskchecks import (
    TEST_FILE,
    argument_output,
    gives,
    listed_output,
    plain,
    quoted_output,
    says_prints,
    script_of,
    task_call,
    task_command,
    task_flags,
)
from duckflow.toolkinds import RUN_TOOLS, WRITE_TOOLS

if TYPE_CHECKING:
    from duckflow.companion.actions import CallOutcome
    from duckflow.llm.types import ToolCall

MAX_FIXES = 2


def signature(call: ToolCall) -> tuple[str, str]:
    a = call.arguments
    return call.name, str(a.get("path") or a.get("command") or "") + "\x00" + str(a.get("content") or "")


@dataclass
class CheckLog:
    """One session's record of changes and the checks of them (kept in memory for the task)."""

    changed: list[str] = field(default_factory=list)  # code files changed since the last proof
    passed: bool | None = None  # None: nothing has checked the last change yet
    last: str = ""  # what the last check said (the ending's words)
    fixes: int = 0  # fix rounds given after a failed check
    asked_call: int = 0  # times the model was asked for a call of its function
    auto_tried: set[str] = field(default_factory=set)  # checks the loop chose and ran
    bad_call: str = ""  # a call check that did not match its function's parameters (its error)
    mismatches: int = 0  # such calls so far (after MAX_FIXES, one is a failed check like any other)
    done: set[tuple[str, str]] = field(default_factory=set)  # calls that succeeded (a repeat is dropped)
    written: list[str] = field(default_factory=list)  # every file written or edited for the task
    unchanged: int = 0  # times the model said DONE with no change made for a task that asks one
    sticky: str = ""  # a failed check that only a change clears (the script broke without its new option)
    task: str = ""
    met: str = ""  # the task's expectation the last passing check met ("" when it compared nothing)
    met_by: set[str] = field(default_factory=set)  # the checks that met one since the last change
    expected: str = ""  # the expectation the last failed check missed
    command: str = ""  # the last check that ran, and what it printed (its first line)
    seen: str = ""
    expect_cmd: str = ""  # the assertion the model wrote first, seen failing on the old code,
    expect_says: str = ""  # and what it says (`mean([1, 2, 3]) == 2`)
    asked_expect: int = 0  # the step asked for that assertion (companion/testfirst.py)
    quiet_seen: set[str] = field(default_factory=set)  # quiet-import checks met since the last change
    failed_tests: list[str] = field(default_factory=list)  # the last failed test run's failures, for the fix
    same_write: str = ""  # a fix round wrote this file as it already was (nothing changed)
    tests_before: set[str] | None = None  # the test files there when the task's first action came

    def fail(self, sig: tuple[str, str], why: str, expected: str = "") -> None:
        """A check that failed: `why` is the ending's words; its call may run again after a fix."""
        self.passed, self.last, self.expected = False, why, expected
        self.done.discard(sig)

    def reset(self, task: str) -> None:
        self.__init__()  # type: ignore[misc]
        self.task = task


def log_of(session: Any) -> CheckLog:
    """The session's CheckLog, started again when the task changes."""
    log: CheckLog = session.turn.checks
    task = session.state.task or ""
    if log.task != task:
        log.reset(task)
    return log


def note(session: Any, ran: list[CallOutcome]) -> None:
    """Tool results into the CheckLog: changes, checks, and the calls that succeeded."""
    log = log_of(session)
    for o in ran:
        sig = signature(o.call)
        if o.restored:  # it changed the task's tests (put back): no change, no check, no evidence
            log.done.discard(sig)
            log.last = f"not kept: it changed {', '.join(o.restored)}, the task's tests (put back as they were)"
            continue
        if o.kept_note:  # the assertion written first, kept until its module is written: not run yet
            log.done.add(sig)
            continue
        if o.call.name in WRITE_TOOLS:
            if o.status == "ok" and o.unchanged and log.passed is False:  # a fix that changed nothing:
                log.same_write = str(o.call.arguments.get("path") or "")  # the next round is told so
            if o.status != "ok" or o.unchanged:  # (a write that changed nothing is no change)
                continue
            log.same_write = ""
            log.done.add(sig)
            log.done = {s for s in log.done if s[0] not in RUN_TOOLS}  # a run after a change is new
            log.sticky = ""
            log.auto_tried.clear()  # (and so is the loop's own check of it)
            log.quiet_seen.clear()
            path = str(o.call.arguments.get("path") or "")
            if path not in log.written:
                log.written.append(path)
            if path.endswith(".py") and path not in log.changed:
                log.changed.append(path)
            if path.endswith(".py"):
                log.passed, log.last, log.met = None, "", ""
                log.met_by.clear()
        elif o.call.name in RUN_TOOLS:
            command = str(o.call.arguments.get("command") or o.call.arguments.get("path") or "the tests")
            log.failed_tests = []
            code, out, err = run_result(o.content) if o.status in ("ok", "error") else (None, "", o.content)
            first = testfirst.noted(log, command, code, err) if o.status == "ok" else None
            if first is not None:  # the assertion written first, run on the code as it is
                log.command, log.seen = command, expect.shown(err.strip().splitlines()[-1] if err.strip() else out)
                if first:
                    log.last = first
                else:
                    log.fail(sig, f"check failed: {testfirst.failed_words(log, command, err)} (on the code as "
                                  "it is, before the change)", log.expect_says)
                continue
            wrong = call_mismatch(command, out, err) if o.status == "ok" and code not in (0, None) else ""
            if wrong and log.mismatches < MAX_FIXES:  # the call was wrong, not the code: no fix
                log.mismatches += 1  # round is used, and the next step may only call it again
                log.bad_call, log.last = wrong, f"not checked: the call did not fit the function ({wrong})"
                session.turn.ask_call = True
                log.done.discard(sig)
                continue
            if o.status != "ok" or code != 0:
                why = "timed out" if code is None and o.status == "ok" else (
                    f"exit {code}" if code is not None else o.status)
                log.command = command
                log.failed_tests = failures(out, err, explain=_explainer(session, command))
                said = testfirst.failed_words(log, command, err) if o.status == "ok" else ""
                log.fail(sig, f"check failed: {said}" if said else f"check failed: {command} → {why}: "
                         f"{(log.failed_tests or [first_error(out, err)])[0]}", log.expect_says if said else "")
                if said:
                    log.seen = expect.shown(err.strip().splitlines()[-1])
                continue
            log.done.add(sig)
            log.command, log.seen = command, expect.shown(out)
            met: list[str] = []
            quiet = quietimport.commands(session, log.task)  # the module must print nothing on import
            if command in quiet:
                why = quietimport.judged(command, out, quiet, session.runner.read_text)
                if why:
                    log.fail(sig, why, quietimport.met_words(quiet))
                    continue
                log.quiet_seen.add(command)
            named = task_command(log.task, log.changed or log.written)
            if named and named[1] and command == named[0]:
                if plain(named[1]) not in plain(out):
                    shown = (out.strip().splitlines() or ["nothing"])[0][:80]
                    log.fail(sig, (f"check failed: {command} → printed {shown!r}; the task "
                                   f"says it prints {named[1]}"), f"{command} prints {named[1]}")
                    continue
                met.append(f"{command} prints {named[1]}")
            called = task_call(session, log.task, log.changed or log.written)
            printed = (out.strip().splitlines() or [""])[-1].strip()
            if called and called[1] and command == called[0]:
                said = f"{expect.call_of(command)} returns {called[1]}"
                if not gives(printed, called[1]):
                    log.fail(sig, (f"check failed: {command} → {printed or 'nothing'}; the task "
                                   f"says {called[1]}"), said)
                    continue
                met.append(said)
            shaped = expect.template(log.task, command, printed)
            if shaped and not shaped[1]:
                log.fail(sig, f"check failed: {command} → {printed or 'nothing'}; the task expects {shaped[0]}",
                         shaped[0])
                continue
            met += [shaped[0]] if shaped else []
            wrong_use = expect.name_not_file(command, session.runner.read_text)
            if wrong_use:
                log.fail(sig, f"check failed: {command} → {printed or 'nothing'}, but {wrong_use}",
                         "a call on the file's content")
                continue
            script = script_of(command)
            quoted = quoted_output(log.task, script) if script and command == f"python3 {script}" else ""
            if quoted and plain(quoted) not in plain(out):
                log.fail(sig, (f"check failed: {command} → its output has no {quoted!r}, "
                               "which the task says it prints"), f"{command} prints {quoted!r}")
                continue
            met += [f"{command} prints {quoted!r}"] if quoted else []
            listed = listed_output(log.task, script) if script and command == f"python3 {script}" else []
            got = [ln.strip() for ln in out.splitlines() if ln.strip()]
            if listed and got != listed:
                log.fail(sig, (f"check failed: {command} → printed {', '.join(got[:6]) or 'nothing'}"
                               f"; the task says it prints {', '.join(listed)}, one per line"),
                         f"{command} prints {', '.join(listed)}")
                continue
            met += [f"{command} prints {', '.join(listed)}"] if listed else []
            expected, how = argument_output(log.task, script, command) if script else ("", "")
            if expected and out.strip() and expected not in out:
                shown = out.strip().splitlines()[0][:80]
                log.fail(sig, (f"check failed: {command} → printed {shown!r}; the task says "
                               f"it prints the argument {how}: {expected!r}"), f"{command} prints {expected!r}")
                continue
            met += [f"{command} prints {expected!r}"] if expected and out.strip() else []
            number = expect.said_number(log.task, script) if script and command == f"python3 {script}" else ""
            if number and not expect.count_seen(out, float(number)):  # "total.py that prints 6"
                log.fail(sig, f"check failed: {command} → printed {log.seen or 'nothing'}; the task says it prints "
                         f"{number}", f"{command} prints {number}")
                continue
            met += [f"{command} prints {number}"] if number else []
            shows = expect.literal_shown(log.task, script, out) if script and not met else ""
            met += [shows] if shows else []
            count = expect.counted(log.task, session.runner.read_text)
            if count and (script in log.written or count[0].split()[-1] in command):
                if not expect.count_seen(out, count[1]):
                    log.fail(sig, (f"check failed: {command} → printed {log.seen or 'nothing'}; "
                                   f"{count[0]} are {count[1]}"), f"it prints {count[1]} ({count[0]})")
                    continue
                met.append(f"it prints {count[1]}, the {count[0]}")
            if script and not out.strip() and says_prints(log.task, script):
                only_defs = only_definitions(session.runner.read_text(script) or "")
                log.fail(sig, (f"check failed: {command} printed nothing; the task says "
                               f"{script} prints something" + (
                                   f" ({script} only defines functions and calls none: add the "
                                   "top-level code that " + ("reads sys.argv and prints" if
                                   re.search(r"argument|argv|引数", log.task, re.I) else
                                   "calls them and prints") + ")"
                                   if only_defs else "")))
                continue
            text = session.runner.read_text(script) if script else None
            flags = task_flags(log.task)
            if script and script in log.changed and flags and not set(flags) & set(_words(command)):
                none = next((ln.strip() for ln in out.splitlines() if re.search(r"\bNone\b", ln)), "")
                if none:  # the option's value, missing, printed as None: the script broke without it
                    log.sticky = (f"check failed: {command} (without {flags[0]}) → printed {none[:80]!r}: give "
                                  f"{flags[0]} a default, so that the script works as before without it")
                    log.fail(sig, log.sticky)
                    continue
                log.last = (f"not checked: {command} ran without {flags[0]}, the option the task "
                            "names")
                continue
            if not out.strip() and script and text is not None and only_definitions(text) and callables(text):
                log.last = (f"not checked: {command} exits 0 with no output ({script} only defines "
                            "functions; a call of its function is needed)")
                continue
            if log.sticky:  # a failure only a change clears (a later run with the option passes)
                log.passed, log.last = False, log.sticky
                continue
            if UNITTEST.match(command):  # the standard library's runner says "Ran 3 tests … OK" on stderr
                tally = re.search(r"^Ran (\d+) tests? in", err, re.M)  # (not `ran`: the outcomes' name)
                if not tally or tally.group(1) == "0":
                    log.last = f"not checked: {command} ran no test"
                    continue
                out = f"{tally.group(1)} passed"
            lines = len(out.strip().splitlines())
            log.passed, log.changed = True, []
            log.last = f"checked: {command} → exit 0" + (f", {lines} line{'s' * (lines != 1)} of output"
                                                         if lines and "pytest" not in command
                                                         and not UNITTEST.match(command) else "")
            if "pytest" in command or UNITTEST.match(command):
                found = re.search(r"(\d+) passed", out)
                log.last = f"checked: {command} → {found.group(0) if found else 'exit 0'}"
                log.seen = found.group(0) if found else log.seen
                met += [f"the tests in {t} pass" for t in expect.tests_of(command) if expect.expect_tests(log, t)]
            met += [log.expect_says] if log.expect_cmd and command == log.expect_cmd else []
            if quiet and not set(quiet) <= log.quiet_seen:  # nothing else shows the import is quiet
                met, log.met = [], ""
            elif quiet:
                met = list(dict.fromkeys([*filter(None, log.met.split("; ")), *met, quietimport.met_words(quiet)]))
            log.met = "; ".join(dict.fromkeys([*filter(None, log.met.split("; ")), *met]))  # (each one met since
            if met:  # the last change, the tests and the call the task names alike)
                log.met_by.add(command)


def _explainer(session: Any, command: str) -> Any:
    """How a failed test of `command`'s test files is said from their source (testview.failed_words)."""
    sources = [session.runner.read_text(t) or "" for t in expect.tests_of(command)]
    return lambda name, said, line: next(filter(None, (testview.failed_words(s, name, said, line)
                                                       for s in sources)), "")


def did_something(log: CheckLog) -> bool:
    """The task changed a file or ran a check (a reply that only says DONE has done nothing)."""
    return bool(log.written) or log.passed is not None or bool(log.done)


def needs_check(log: CheckLog) -> bool:
    """A code change that nothing has proved yet (text and data files have nothing to run), or
    a last check that failed."""
    return (bool(log.changed) and log.passed is not True) or log.passed is False


UNITTEST = re.compile(r"^python3 -m unittest -q \S+$")


def protected_paths(session: Any) -> set[str]:
    """The test files of this task that are the expectation, read-only to the model (expect.protected)."""
    from duckflow.companion.shownfiles import workspace_files
    from duckflow.protocols.filenames import plausible_paths

    log = log_of(session)
    root = session.runner.root
    files = workspace_files(root)
    named = [p for p in plausible_paths(log.task, files)  # a test named but not there yet is to write
             if not TEST_FILE.search(p) or (root / p).is_file()]
    if log.tests_before is None:  # a test that came later (a command made it) is not the task's
        log.tests_before = {f for f in files if TEST_FILE.search(f)}
    return expect.protected(log.task, files, named, log) & log.tests_before


def refused_test_write(session: Any, call: ToolCall) -> str:
    """Why a call that writes a protected test is refused ("" when it writes none)."""
    path = str(call.arguments.get("path") or "")
    if call.name not in WRITE_TOOLS or not path or path not in protected_paths(session):
        return ""
    from duckflow.protocols.filenames import plausible_paths

    code = [p for p in plausible_paths(log_of(session).task, []) if p.endswith(".py") and not TEST_FILE.search(p)]
    return expect.refused_write(path, code)


def callables(text: str) -> bool:
    """The module defines a function or class (a call can check it); a module of values alone
    (`PORT = int(os.environ.get('PORT', 8080))`) has nothing to call: running it is its check."""
    return bool(re.search(r"^(?:async\s+)?(?:def|class)\s", text, re.M))


def _words(command: str) -> list[str]:
    try:
        return [w.split("=", 1)[0] for w in shlex.split(command)]
    except ValueError:
        return command.split()



def ending(log: CheckLog) -> str:
    """What the result says about its check."""
    if log.passed is True:
        return log.last
    if log.passed is False:
        return log.last
    if not log.changed and log.written:
        names = ", ".join(log.written[:3])
        return f"nothing to run: {names} {'is' if len(log.written) == 1 else 'are'} not code"
    if not log.changed:
        return "nothing was changed"
    return log.last or "not checked: nothing ran the changed code"

