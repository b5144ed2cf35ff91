"""What a task's result must show, and the ending that compares with it: done, not done, or not verified.

A check that ran and printed something is not evidence that the task was done: the mean of 1,
2, 3 printed as 3.0 ran fine. "Done" needs an expectation the task itself gives — a value it
names (`average([2, 4]) should return 3`), the output it quotes, the lines it lists, a count it
asks for ("counts the words in notes.txt": the loop counts them itself), the tests it points
at, or the assertion the model wrote first and saw failing on the old code — met by a check's
output (`CheckLog.met`). A check that passes with nothing to compare ends "Finished, not
verified — ran X, it printed Y". A call that hands a function a file's *name* where the task
means the file (`count_words('notes.txt')` counting the string) contradicts the task.
`Result` is the ending's kind and evidence, for the reply and `duckflow run --json`.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, Literal

from duckflow.companion.taskchecks import TEST_FILE

CheckLog = Any  # companion/checks.py CheckLog (not imported: checks imports this module)
Kind = Literal["done", "not_done", "not_verified"]
_UNITS = {"word": "words", "line": "lines", "character": "characters", "char": "characters", "letter": "letters"}
_COUNTS = re.compile(r"\bcount(?:s|ing)?\s+(?:the\s+|how many\s+)?(?:number\s+of\s+)?(words?|lines?|characters?|"
                     r"chars?|letters?)\s+(?:in|of)\s+(?:the\s+file\s+)?[`'\"]?([\w./-]+\.(?:txt|md|csv|log))\b", re.I)


# a count of some of them, not all ("the lines in app.log that contain ERROR", "per level", "the
# most common words"): the total would be the wrong expectation, so there is none
_SOME = re.compile(r"\b(that|which|with|contain\w*|start\w*|begin\w*|end(?:s|ing)\b|match\w*|per|by|each|every|"
                   r"where|except|excluding|without|unique|distinct|different|most|least|longest|shortest|"
                   r"frequen\w*|occurrences?|separately|group\w*|non-?empty|blank|empty)\b", re.I)


@dataclass
class Result:
    """How a task ended, said plainly, with what was checked against what was expected."""

    kind: Kind
    said: str  # the ending's line
    check: str = ""  # the command whose output was compared (or that ran)
    expected: str = ""  # what the task's expectation says ("" when none could be formed)
    seen: str = ""  # what the check printed

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def counted(task: str, read: Any) -> tuple[str, int] | None:
    """("words in notes.txt", 20) when the task asks to count the words, lines or characters of a
    workspace file: the loop counts them itself, so the script's number can be compared. None when
    the sentence counts only some of them (`that contain ERROR`, `per level`)."""
    m = _COUNTS.search(task)
    if not m or _SOME.search(re.split(r"\.(?:\s|$)|;|\n", task[m.end():], maxsplit=1)[0]):
        return None
    text = read(m.group(2))
    if text is None:
        return None
    unit = _UNITS[m.group(1).lower().rstrip("s")]
    n = {"words": len(text.split()), "lines": len(text.splitlines()),
         "characters": len(text), "letters": sum(c.isalpha() for c in text)}[unit]
    return f"{unit} in {m.group(2)}", n


def numbers(text: str) -> list[str]:
    return re.findall(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])", text)


def count_seen(out: str, want: float) -> bool:
    """The output shows the count (3 and 3.0 alike) on its last line that has a number."""
    lines = [ln for ln in out.splitlines() if numbers(ln)]
    return bool(lines) and any(float(n) == want for n in numbers(lines[-1]))


def name_not_file(command: str, read: Any) -> str:
    """Why a call check contradicts the task: it hands the function a workspace file's name and
    the function never opens a file, so it worked on the name ("" when not so)."""
    m = re.match(r'python3 -c "import (\w+); print\(\1\.(\w+)\((.*)\)\)"$', command)
    if not m:
        return ""
    names = [n for n in re.findall(r"'([^']+)'|\"([^\"]+)\"", m.group(3)) for n in n if n]
    files = [n for n in names if "." in n and read(n) is not None]
    source = read(f"{m.group(1)}.py") or ""
    body = re.search(rf"^def {re.escape(m.group(2))}\(.*?(?=^\S|\Z)", source, re.M | re.S)
    if not files or body is None or re.search(r"\bopen\(|read_text|Path\(", body.group(0)):
        return ""
    return (f"{m.group(2)}('{files[0]}') was given the file's name, and {m.group(2)} never opens a file: "
            f"it worked on the text '{files[0]}', not on what {files[0]} holds")


def said_number(task: str, script: str) -> str:
    """The number the task says `script` prints when run bare ("total.py that prints 6"), or "".
    Only a number that ends the phrase: "prints 6 lines" says something else, "prints 3, 2, 1" a list."""
    name = re.escape(script.rsplit("/", 1)[-1])
    m = re.search(rf"(?<![\w/.-]){name}\b[^.;]*?\b(?:prints?|outputs?|shows?|displays?)\s+(-?\d+(?:\.\d+)?)"
                  r"(?=[.;!]?\s*$|[.;!]\s|,\s+(?!-?\d)|\s+(?:and|then)\s+(?!-?\d))", task, re.I)  # (not a list)
    return m.group(1) if m else ""


_TEMPLATE = re.compile(r"\b([a-z_]\w*)\(([^()]*)\)[^.;]*?\b(?:returns?|prints?|gives?)\s+"
                       r"(?:'([^'\n]*[A-Z]{3,}[^'\n]*)'|\"([^\"\n]*[A-Z]{3,}[^\"\n]*)\")")


def templated(task: str, fn: str) -> bool:
    """The task writes `fn`'s value with a placeholder for its parameter (see `template`)."""
    for m in _TEMPLATE.finditer(task):
        params = [p.strip().split("=")[0].strip().upper() for p in m.group(2).split(",") if p.strip()]
        if m.group(1) == fn and any(p in (m.group(3) or m.group(4)) for p in params):
            return True
    return False


def template(task: str, command: str, printed: str) -> tuple[str, bool] | None:
    """A call check against the value the task writes with a placeholder for its parameter
    ("greet(name) that returns 'Hello, NAME!'"): (what it expects, met); None when the task
    writes no such value for the function the command calls."""
    call = re.match(r'python3 -c "import (\w+); print\(\1\.(\w+)\((.*)\)\)"$', command)
    if not call:
        return None
    for m in _TEMPLATE.finditer(task):
        params = [p.strip().split("=")[0].strip() for p in m.group(2).split(",") if p.strip()]
        shape = m.group(3) or m.group(4)
        holes = [p.upper() for p in params if p.upper() in shape]
        if m.group(1) != call.group(2) or not holes:
            continue
        pattern = re.escape(shape)
        for hole in holes:
            pattern = pattern.replace(hole, "(.+)", 1)
        return f"{call.group(2)}({call.group(3)}) returns the task's {shape!r}", bool(re.fullmatch(pattern, printed))
    return None


_SAYS = r"\b(?:prints?|outputs?|shows?|displays?)\s+(?!the\b|a\b|an\b|its\b|their\b|each\b|all\b|how\b)([A-Z0-9][^\n;]{0,60}?)(?:\.?$|\.\s|;|\s+(?:and|when|if|instead|for|on|one|each|with|to)\b)"


def literal_shown(task: str, script: str, out: str) -> str:
    """The words the task says `script` prints, unquoted ("hello.py that prints Hello, World!"),
    when its output shows them: positive evidence only (a phrase read wrongly never fails a check)."""
    from duckflow.companion.taskchecks import plain

    name = re.escape(script.rsplit("/", 1)[-1])
    m = re.search(rf"(?<![\w/.-]){name}\b[^.;]*?" + _SAYS, task)
    said = m.group(1).strip() if m else ""
    return f"{script} prints {said}" if said and plain(said) and plain(said) in plain(out) else ""


_ASKS_TESTS = re.compile(r"(?<!n't )(?<!not )(?<!never )\b(add|write|create|update|change|fix|edit|extend|rewrite|correct)\b(?:[^.;]|\.(?=\w))*\btests?\b", re.I)
_FORBIDS = re.compile(r"\b(do not|don't|never|must not|without)\s+(chang|modify|edit|touch|alter)\w*\s+"
                      r"(them|it|the\s+tests?|the\s+test\s+files?|[\w./-]*test[\w./-]*)", re.I)


def protected(task: str, files: list[str], named: list[str], log: CheckLog) -> set[str]:
    """Test files that are the task's expectation, not the model's to change: the tests the task
    names or points at (that were there before the task: a test it asks to write is the model's
    to write) and the tests beside a code file it asks to change. Empty when it asks for
    the tests to change. (The assertion the loop asks for first is held by the loop, CheckLog.expect_cmd,
    never in a file the model could write.)"""
    if _ASKS_TESTS.search(task) and not _FORBIDS.search(task):
        return set()
    tests = {p for p in named if TEST_FILE.search(p) and p not in log.written}  # one it wrote is its own
    if any(p.endswith(".py") and not TEST_FILE.search(p) for p in named):
        stems = {p.rsplit("/", 1)[-1].removesuffix(".py") for p in named}
        tests |= {f for f in files if TEST_FILE.search(f) and any(s in f for s in stems)}
    return tests


def refused_write(path: str, code: list[str]) -> str:
    """The plain reason a write of a protected test is refused (and the model asked again)."""
    to = " or ".join(code[:2]) or "the code"
    return (f"{path} holds the task's tests: they say what the result must do, and they are not yours "
            f"to change. Change {to} so that they pass.")


def result_of(log: CheckLog, finished: bool, message: str) -> Result:
    """The ending's kind and evidence from the task's check log and how the loop stopped."""
    if not finished:
        line = next((ln for ln in message.splitlines() if ln.startswith("Not done")), "")
        return Result("not_done", line or f"Not done — {message.splitlines()[0] if message else 'stopped'}",
                      log.command, log.expected, log.seen)
    if log.passed is False:  # said DONE over a failed check: that check is the ending
        return Result("not_done", f"Not done — {log.last}", log.command, log.expected, log.seen)
    if log.met:
        return Result("done", done_line(log), log.command, log.met, log.seen)
    return Result("not_verified", unverified_line(log), log.command, "", log.seen)


def done_line(log: CheckLog) -> str:
    return f"Done — {log.last}; as the task expects: {log.met}"


def unverified_line(log: CheckLog) -> str:
    """'Finished, not verified — ran X, it printed Y': the task gave nothing to compare with."""
    if log.last.startswith("accepted"):
        return f"Finished, not verified — {log.last}"
    if log.command:
        shown = log.seen or "nothing"
        return (f"Finished, not verified — ran {log.command}, it printed {shown}; the task names no result "
                "to compare it with")
    if log.written:
        return f"Finished, not verified — wrote {', '.join(log.written[:3])}; nothing ran it"
    return "Finished, not verified — nothing was changed or run"


def shown(out: str) -> str:
    """What a check printed, for the ending: its first line, with how many more."""
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    if not lines:
        return ""
    return repr(lines[0][:80]) + (f" (and {len(lines) - 1} more line{'s' * (len(lines) > 2)})" if len(lines) > 1 else "")


def call_of(command: str) -> str:
    """`average([2, 4])` of `python3 -c "import stats; print(stats.average([2, 4]))"`."""
    m = re.match(r'python3 -c "import (\w+); print\(\1\.(.+)\)"$', command)
    return m.group(2) if m else command


def tests_of(command: str) -> list[str]:
    return [w for w in command.split() if TEST_FILE.search(w)]


def expect_tests(log: CheckLog, test: str) -> bool:
    """A test file is the task's expectation: the task names or points at it, the loop wrote it
    as the expectation, or it was there before the task and the model has not written it."""
    from duckflow.protocols.filenames import plausible_paths

    files = [test]
    if test in protected(log.task, files, plausible_paths(log.task, files), log):
        return True
    return test not in log.written
