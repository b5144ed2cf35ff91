"""What a task's own words say to check: the option it adds, the command it names and what
that prints, a call it writes out and the value it expects.

"Add a --name option … so that `python3 greet.py --name Ann` prints Hello, Ann" names the
check and its expected output; "average([2, 4]) should return 3" names a call and its value.
The loop runs these itself (companion/checks.py), before asking the model for a check.
"Fix slug.py so that the test passes" also says what not to change: the test (`guarded_tests`).
"""

from __future__ import annotations

import ast
import re
import shlex
from pathlib import PurePosixPath
from typing import Any

TEST_FILE = re.compile(r"(^|/)test_[^/]*\.py$|_test\.py$")
# a task that asks for the tests themselves to change ("add a test", "update the tests")
CHANGES_TESTS = re.compile(r"\b(add|write|create|update|change|fix|edit|extend|correct|rewrite)\s+"
                           r"(the\s+|a\s+|an\s+|new\s+|more\s+|its\s+)*(unit\s+)?tests?\b", re.I)


def script_of(command: str) -> str | None:
    """FILE of `python3 FILE ...` (None for anything else)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if len(words) >= 2 and words[0] in ("python3", "python") and words[1].endswith(".py"):
        return words[1]
    return None


def task_flags(task: str) -> list[str]:
    """The command-line options a task names (`--name`, `-n`): a check of the script must use one."""
    found = re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-zA-Z])(?![\w-])", task)
    return list(dict.fromkeys(f for f in found if f not in ("-c", "-m")))


_TASK_CMD = re.compile(r"`(python3? [^`\n]+)`|\"(python3? [^\"\n]+)\"|"
                       r"(?<![`\"\w])(python3? [\w./-]+\.py(?: --?[\w-]+(?: [\w.@:/-]+)?)*)")
_PRINTS = re.compile(r"\s*(?:,|should|must|will|then|it)?\s*(?:prints?|outputs?|shows?|displays?)\s+"
                     r"[`\"'“]?(.+?)[`\"'”]?\s*(?:$|\.\s|;|,?\s+(?:and|when|if|instead)\b)", re.I)


def task_command(task: str, changed: list[str]) -> tuple[str, str] | None:
    """The command the task itself names for a changed script (`python3 greet.py --name Ann`)
    and what the task says it prints ("" when it does not say): the first check to run."""
    for m in _TASK_CMD.finditer(task):
        command = re.sub(r"^python ", "python3 ", next(g for g in m.groups() if g).strip())
        if script_of(command) in changed:
            said = _PRINTS.match(task[m.end():])
            return command, (said.group(1).strip() if said else "")
    return None


_LITERAL = r"(-?\d+(?:\.\d+)?|'[^'\n]*'|\"[^\"\n]*\"|\[[^\]\n]*\]|\([^)\n]*\)|\{[^}\n]*\}|True|False|None)"
_RETURNS = re.compile(r"\s*(?:should|must|will|to|it|then)?\s*(?:returns?|gives?|be|is|==|equals?|->|→)\s+"
                      + _LITERAL)
_VALUE = re.compile(r"\b(?:returns?|gives?|be|is|==|equals?)\s+" + _LITERAL + r"|(?:->|→)\s*" + _LITERAL)
_WANTED = re.compile(r"\b(?:should|must|ought\s+to|needs?\s+to|has\s+to|supposed\s+to|expected\s+to|expect(?:ed)?|want(?:ed)?)\b"
                     r"(?:\s+\w+){0,2}\s*$", re.I)
_CONTRAST = re.compile(r"\b(but|instead|currently|now|actually|wrong|wrongly|incorrect(?:ly)?|however|not)\b|\bisn't|"
                       r"\bdoesn't|\bdon't", re.I)
_IN_FILE = re.compile(r"\s*,?\s+(?:in|from|of)\s+[`'\"]?[\w./-]+\.py[`'\"]?")


def expected_value(task: str, pos: int) -> str:
    """The value the task says a call at `pos` (just after its closing parenthesis) should give:
    `average([2, 4]) should return 3`, `f(2) in m.py should be 5, but it returns 4` (the wanted
    one, not the one it gives now), `f(2) returns 4 but should return 5`. "" when the sentence
    says a value without saying it is the wanted one and also says it is wrong ("returns 4, which
    is wrong"): a value read the wrong way round would make the unfixed result the expectation."""
    start = pos + (m.end() - m.start() if (m := _IN_FILE.match(task, pos)) else 0)
    stop = re.search(r"\.(?:\s|$)|;|\n", task[start:])
    clause = task[start:start + stop.start()] if stop else task[start:]
    found = [(v, next(g for g in v.groups() if g is not None)) for v in _VALUE.finditer(clause)]
    wanted = [lit for v, lit in found if _WANTED.search(clause[max(0, v.start() - 30):v.start()])]
    if wanted:
        return wanted[0]
    first = _RETURNS.match(clause)
    if first and not _CONTRAST.search(clause):
        return first.group(1)
    return ""


def task_call(session: Any, task: str, changed: list[str]) -> tuple[str, str] | None:
    """A call the task writes out for a function of a changed module (`average([2, 4]) should
    return 3`): the check `python3 -c "import stats; print(stats.average([2, 4]))"` and the
    value the task expects ("" when it does not say). Literal arguments only."""
    for m in re.finditer(r"\b([A-Za-z_]\w*)\(", task):
        depth, end = 0, -1
        for i in range(m.end() - 1, len(task)):
            depth += {"(": 1, ")": -1}.get(task[i], 0)
            if depth == 0:
                end = i
                break
        args = task[m.end():end] if end > 0 else ""
        if end < 0 or '"' in args:
            continue
        try:
            ast.literal_eval(f"({args},)" if args.strip() else "()")
        except (ValueError, SyntaxError):
            continue
        for path in changed:
            mod = PurePosixPath(path).stem
            if "/" in path or not re.fullmatch(r"[A-Za-z_]\w*", mod):
                continue
            found = re.search(rf"^def {re.escape(m.group(1))}\((.*?)\)", session.runner.read_text(path) or "",
                              re.M | re.S)
            if found and not args.strip() and _required(found.group(1)):
                continue  # "if the `classify()` function is passed …" names it, it does not call it
            if found:
                return (f'python3 -c "import {mod}; print({mod}.{m.group(1)}({args}))"',
                        expected_value(task, end + 1))
    return None


def _required(params: str) -> bool:
    """A def's parameters include one a call must give (neither defaulted nor *args, **kw or self)."""
    try:
        a = ast.parse(f"def f({params}): pass").body[0].args  # type: ignore[attr-defined]
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # (a file built to break the parser)
        return False
    plain = [*a.posonlyargs, *a.args]
    names = [x.arg for x in plain[:len(plain) - len(a.defaults)] if x.arg not in ("self", "cls")]
    return bool(names) or any(d is None for d in a.kw_defaults)


def gives(printed: str, expected: str) -> bool:
    """What a call printed is the value the task expects (3 and 3.0 alike; a string unquoted)."""
    want = ast.literal_eval(expected)
    try:
        got = ast.literal_eval(printed)
    except (ValueError, SyntaxError):
        got = printed
    return bool(got == want or str(want) == printed)


def plain(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


_QUOTED = re.compile(r"([\w./-]+\.py)\b[^.;]*?\b(?:prints?|outputs?|shows?|displays?)\b[^.;`\"“]*?"
                     r"(?:`([^`\n]+)`|\"([^\"\n]+)\"|“([^”\n]+)”)", re.I)


def quoted_output(task: str, script: str) -> str:
    """Text the task quotes as what `script` prints when run bare (`countdown.py that prints 3,
    2, 1 and then "Liftoff!"`), or "" when it quotes none."""
    for m in _QUOTED.finditer(task):
        if m.group(1) in (script, PurePosixPath(script).name):
            return next(g for g in m.groups()[1:] if g)
    return ""


_LISTED = re.compile(r"([\w./-]+\.py)\b[^.;]*?\b(?:prints?|outputs?|shows?|displays?)\s+"
                     r"((?:[\w.!?-]+,\s*)+(?:and\s+)?[\w.!?-]+?)[.,]?\s+"
                     r"(?:on separate lines|one per line|each on its own line|on its own line)", re.I)


def listed_output(task: str, script: str) -> list[str]:
    """The lines the task lists as what `script` prints when run bare (`countdown.py so that it
    prints 3, 2, 1 on separate lines` → ["3", "2", "1"]), or [] when it lists none."""
    for m in _LISTED.finditer(task):
        if m.group(1) in (script, PurePosixPath(script).name):
            return [w.strip() for w in re.split(r",\s*(?:and\s+)?|\s+and\s+", m.group(2)) if w.strip()]
    return []


# the task asks for a file to change ("Fix countdown.py …", "calc.py に…追加して"): a run of the
# unchanged code that passes is no proof that it was done ("make sure X runs" only checks)
_CHANGES = re.compile(r"\b(fix|change|add|update|rename|replace|remove|delete|edit|modify|refactor|correct|"
                      r"implement|write|create|rewrite|convert|move|make(?!\s+sure))\b|修正|変更|追加|直し|直す|"
                      r"書き換|作成|作って|削除|置き換", re.I)


def asks_change(task: str) -> bool:
    """The task's words ask for a file to be written or changed (not only run or checked)."""
    return bool(_CHANGES.search(task))


_ACTS = re.compile(r"\b(run|execute|test|check|verify|install|build|start|launch|format|lint)\b|実行|テスト|確認", re.I)


def asks_answer(task: str) -> bool:
    """The task only asks something (`what does calc.py do?`): no change, no run. Its answer,
    from the files shown, can end it with no action."""
    return not asks_change(task) and not _ACTS.search(task)


def says_prints(task: str, script: str) -> bool:
    """The task says `script` prints something (`Create shout.py that prints its first argument`)."""
    name = re.escape(PurePosixPath(script).name)
    return bool(re.search(rf"(?<![\w/.-]){name}\b[^.;]*?\b(prints?|outputs?|shows?|displays?)\b", task, re.I))



_CASE = ((re.compile(r"\bupper[ -]?case\b|\bcapital letters\b|\ball caps\b|大文字", re.I), str.upper, "in upper case"),
         (re.compile(r"\blower[ -]?case\b|小文字", re.I), str.lower, "in lower case"))


def argument_output(task: str, script: str, command: str) -> tuple[str, str]:
    """(expected output, how) when the task says `script` prints its argument in upper or lower
    case (`prints its first command-line argument in upper case`) and `command` gives it one;
    ("", "") otherwise. Only a change of case: it cannot be read two ways."""
    if not says_prints(task, script) or not re.search(r"argument|argv|引数", task, re.I):
        return "", ""
    try:
        words = [w for w in shlex.split(command)[2:] if not w.startswith("-")]
    except ValueError:
        return "", ""
    if not words:
        return "", ""
    given = words[0] if re.search(r"\bfirst\b|最初|1つ目", task, re.I) else " ".join(words)
    for pattern, change, how in _CASE:
        if pattern.search(task) and change(given) != given:
            return change(given), how
    return "", ""


def guarded_tests(task: str, shown: list[str], named: list[str]) -> set[str]:
    """The test files a task asks to make pass by changing the code ("The test in test_slug.py
    fails. Fix slug.py"): they are the check, not the thing to change, so no step offers to edit
    them (a small model "fixed" the test instead, or made a no-op edit of it). Empty when the task
    names no code file to change, or asks for the tests to change."""
    if CHANGES_TESTS.search(task) or not any(p.endswith(".py") and not TEST_FILE.search(p) for p in named):
        return set()
    return {p for p in shown if TEST_FILE.search(p)}
