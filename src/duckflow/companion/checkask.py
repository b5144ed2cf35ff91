"""What a step asks the model about checking: the failed check to fix, the call or the run to write, and the grammar narrowed to it.

The check log (companion/checks.py) says what is unproven; these lines and grammar rules turn
that into the step's words: "The check failed: … Fix the code", "Now check greet.py: call
greet with sample arguments", a step that may only run `python3 -c "import m; print(m.f(…))"`.
"""

from __future__ import annotations

import ast
import re
from pathlib import PurePosixPath
from typing import Any

from duckflow.companion.checks import MAX_FIXES, CheckLog
from duckflow.companion.nextcheck import argument_scripts
from duckflow.companion.taskchecks import TEST_FILE, task_flags


def signature_of(text: str, fn: str) -> str:
    """`name(a, b=2)` as the module defines it ("" when it does not)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return ""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == fn:
            return f"{fn}({ast.unparse(node.args)})"
    return ""


def call_commands_rule(modules: list[str]) -> str:
    """GBNF: `python3 -c "import M; print(M.F(ARGS))"` for the changed modules, args as plain
    literals (numbers, quoted words, lists): no other code reaches the interpreter."""
    alts = " | ".join(f'"python3 -c \\"import {m}; print({m}."' for m in modules)
    return (f"callcheck ::= ( {alts} ) fname \"(\" cargs? \"))\\\"\"\n"
            "fname ::= [A-Za-z_] [A-Za-z0-9_]{0,30}\n"
            "cargs ::= carg ( \", \" carg ){0,3}\n"
            "carg ::= \"-\"? [0-9] [0-9.]{0,8} | \"'\" [A-Za-z0-9 ,.!?_-]{0,20} \"'\" "
            "| \"[\" ( carg ( \", \" carg ){0,4} )? \"]\" | \"True\" | \"False\" | \"None\"\n")


def run_only_grammar(grammar: str, script: str) -> str:
    """A step's grammar narrowed to one action: `$ run @ python3 SCRIPT ARGS` (no shell syntax)."""
    from duckflow.protocols.grammar import literal

    grammar = re.sub(r"^action ::= .*$", "action ::= argrun", grammar, count=1, flags=re.M)
    grammar = re.sub(r"action\{\d+,\d+\}", "action", grammar, count=1)  # exactly one
    return grammar + f'argrun ::= "$ run @ python3 " {literal(script)} " " [^\\n`$;&|<>]{{1,60}} "\\n"\n'


def call_modules(session: Any, task: str, log: CheckLog) -> list[str]:
    """Top-level modules the task names or changed that define functions (a call checks them)."""
    from duckflow.protocols.filenames import plausible_paths

    named = [p for p in plausible_paths(task, []) if p.endswith(".py") and "/" not in p]
    mods = []
    for path in dict.fromkeys([*named, *log.changed]):
        text = session.runner.read_text(path)
        if text is not None and "def " in text and not TEST_FILE.search(path):
            mods.append(PurePosixPath(path).stem)
    return [m for m in mods if re.fullmatch(r"[A-Za-z_]\w*", m)]


def check_lines(session: Any, log: CheckLog, ask_call: bool, mods: list[str],
                 task: str) -> list[str]:
    """What the step says about checking: the failed check to fix, or the call to write."""
    if log.passed is False:
        if log.same_write:  # at temperature 0 the same prompt gives the same reply: say what it did
            return [*_fix_lines(log), f"Your last reply wrote {log.same_write} exactly as it already was: "
                    "nothing changed. Change the lines that make the check fail."]
        return _fix_lines(log)
    return _other_lines(session, log, ask_call, mods, task)


def _fix_lines(log: CheckLog) -> list[str]:
    """The failed check to fix: every failed test at once (one change can fix them all), or its error."""
    if len(log.failed_tests) > 1:
        return [f"The check failed: {log.command} →\n" + "\n".join(f"- {f}" for f in log.failed_tests)
                + f"\nFix the code so that they pass (chance {log.fixes} of {MAX_FIXES})."]
    return [f"The check failed: {log.last.removeprefix('check failed: ')}. Fix the code so that "
            f"it passes (chance {log.fixes} of {MAX_FIXES})."]


def _other_lines(session: Any, log: CheckLog, ask_call: bool, mods: list[str], task: str) -> list[str]:
    scripts = argument_scripts(session, log)
    if session.turn.take_ask_run() and scripts:
        session.turn.run_only = scripts[0]  # the step's grammar allows only that run
        flags = task_flags(task)
        if flags:
            return [f"Now check {scripts[0]}: run it with {flags[0]} and a sample value, as "
                    f"$ run @ python3 {scripts[0]} {flags[0]} followed by the value."]
        return [f"Now check {scripts[0]}: run it with sample arguments, as "
                f"$ run @ python3 {scripts[0]} followed by the arguments."]
    if ask_call:
        mod = mods[0]
        text = session.runner.read_text(f"{mod}.py") or ""
        defs = re.findall(r"^def ([A-Za-z_]\w*)", text, re.M)
        named = [f for f in re.findall(r"\b([A-Za-z_]\w*)\(", task) if f in defs]
        fn = (named or defs or ["f"])[0]
        said = []
        if log.bad_call:
            said = [f"Your check call was wrong, not the code: {log.bad_call}. {mod}.py defines "
                    f"{signature_of(text, fn) or fn}: call it with arguments of that form, and leave the code as it is."]
            log.bad_call = ""
        return said + [f"Now check {mod}.py: call {fn} with sample arguments and print the result, as "
                       f"$ run @ python3 -c \"import {mod}; print({mod}.{fn}(...))\" with real values for ..."]
    lines = []
    if log.unchanged and not log.written:  # it said DONE having changed nothing
        lines.append("Nothing has been changed yet, and the task asks for a change: write it now "
                     "(an edit or a new file); running the code as it is proves nothing.")
    if log.last.startswith("not checked"):
        lines.append(f"Note: {log.last}.")
    if session.state.evidence:
        lines.append("If the results show the task is complete, write one short thought and "
                     "\"~ next: DONE\". Otherwise fix what failed.")
    return lines
