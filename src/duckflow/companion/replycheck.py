"""Why a single-call reply cannot be used as it is, found before anything runs (the re-ask text).

The two-call turn re-asks a reply it cannot read (core.correction); a single-call step does the
same here, and also for replies that read fine but would do nothing or the wrong thing: an edit
whose SEARCH matches nowhere (the error and the file's closest lines go back), an edit whose
SEARCH equals its REPLACE (a no-op; beside a real change it is only dropped), an addition that would define a function the file already
has (a second `def main()`, unless the addition is only that function again: then it replaces
it), an empty reply, a write that repeats one line over and over (a small model stuck in a loop), a
write or edit that would leave a Python file that does not parse,
and a repeat of exactly what the person denied.
`problems` returns (the calls still usable, the re-ask text or "").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from duckflow.companion.planmarks import same_call
from duckflow.llm.types import ToolCall
from duckflow.protocols.editblocks import (
    apply_hunks,
    as_replacements,
    describe_failures,
    duplicate_definitions,
    parse_hunks,
)

MAX_REASKS = 2
# a reply stuck repeating one line is re-asked with a mild repeat penalty (llama.cpp's
# repeat_penalty; llama-cpp-python 0.3.36's default is 1.0, none): the same prompt at temperature
# 0 would loop the same way again
LOOP_PENALTY = 1.1
# a re-ask answered with the same unusable reply (a no-op edit, twice) is asked once more sampling
# at this temperature with another seed (llm/bestof.py's candidates use the same 0.7)
RESAMPLE_TEMPERATURE = 0.7


def hunks_text(hunks: Sequence[Any]) -> str:
    """An edit's content made of `hunks` again (SEARCH/REPLACE blocks)."""
    return "".join(f"<<<<<<< SEARCH\n{h.search}=======\n{h.replace}>>>>>>> REPLACE\n" for h in hunks)


def redefinition_as_replacement(call: ToolCall, read: Callable[[str], str | None]) -> ToolCall:
    """An addition (empty SEARCH) that only redefines a function the file has — `def add` again,
    fixed — is the change of that function: its hunk becomes a replacement of the old lines
    (a second `def` would never be what was meant). Anything else is left as it is."""
    from dataclasses import replace

    old = read(str(call.arguments.get("path") or ""))
    hunks = parse_hunks(str(call.arguments.get("content") or ""))
    fixed = as_replacements(old, hunks) if old is not None and hunks else None
    if fixed is None:
        return call
    return replace(call, arguments={**call.arguments, "content": hunks_text(fixed)})


def repetition(text: str) -> str:
    """The line a reply repeats over and over (a small model stuck in a loop), or ""."""
    lines = [ln.strip() for ln in text.splitlines() if len(ln.strip()) > 3]
    if len(lines) < 8:
        return ""
    top = max(lines, key=lines.count)  # (the first of the most repeated)
    return top if lines.count(top) >= 4 and len(set(lines)) < len(lines) / 2 else ""


def looping_tail(text: str) -> str:
    """The line a reply cut off by its token bound was repeating at its end (its last 8 whole
    lines are mostly that line), or "": the loop ran to the bound, the block never closed."""
    lines = [ln.strip() for ln in text.splitlines()[:-1] if len(ln.strip()) > 3][-8:]
    top = max(lines, key=lines.count) if lines else ""
    return top if lines.count(top) >= 5 else ""


def repetition_problem(call: ToolCall) -> str:
    """A write or edit whose new lines are mostly one line again and again: re-asked, never applied."""
    content = str(call.arguments.get("content") or "")
    if call.name == "edit_file":
        hunks = parse_hunks(content) or []
        content = "".join(h.replace for h in hunks)
    line = repetition(content)
    if not line:
        return ""
    path = str(call.arguments.get("path") or "")
    times = sum(1 for ln in content.splitlines() if ln.strip() == line)
    return (f"Your change to {path} repeats `{line[:60]}` {times} times. Write each "
            "line once, only the lines the task needs.")


def python_problem(call: ToolCall, read: Callable[[str], str | None]) -> str:
    """A write or edit that would leave a Python file that does not parse (protocol lines or
    prose written into it, a cut-off block); an edit of a file that did not parse before is
    left alone (a fix may take more than one step)."""
    path = str(call.arguments.get("path") or "")
    if not path.endswith(".py"):
        return ""
    old = read(path)
    if call.name == "write_file":
        text: str | None = str(call.arguments.get("content") or "")
    else:
        hunks = parse_hunks(str(call.arguments.get("content") or ""))
        applied = apply_hunks(old, hunks) if old is not None and hunks else None
        text = applied.text if applied is not None and applied.ok else None
    if text is None or (old is not None and not _parses(old, path)):
        return ""
    try:
        compile(text, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return (f"{path} would not be valid Python (line {exc.lineno}: {exc.msg}). Write only Python "
                "code in its block, so that it runs.")
    return ""


def _parses(text: str, path: str) -> bool:
    try:
        compile(text, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def without_noops(call: ToolCall) -> ToolCall | None:
    """The edit without its hunks whose SEARCH equals their REPLACE; None when nothing else is left."""
    from dataclasses import replace

    hunks = parse_hunks(str(call.arguments.get("content") or ""))
    if not hunks or not all(h.complete for h in hunks):
        return call
    real = [h for h in hunks if not (h.complete and h.search.strip() and h.search.strip() == h.replace.strip())]
    if len(real) == len(hunks):
        return call
    if not real:
        return None
    return replace(call, arguments={**call.arguments, "content": hunks_text(real)})


def edit_problem(call: ToolCall, read: Callable[[str], str | None]) -> str:
    """What is wrong with an edit_file call's hunks against the file as it is ("" = nothing)."""
    path = str(call.arguments.get("path") or "")
    hunks = parse_hunks(str(call.arguments.get("content") or ""))
    old = read(path)
    if hunks is None or old is None:
        return ""
    same = [i + 1 for i, h in enumerate(hunks) if h.complete and h.search.strip()
            and h.search.strip() == h.replace.strip()]
    if same:
        return (f"Hunk {same[0]} for {path} changes nothing: its SEARCH and REPLACE are the same. "
                "Write the changed lines in REPLACE.")
    twice = duplicate_definitions(old, hunks)
    if twice:
        return (f"{path} already defines {', '.join(twice)}: change the existing "
                f"`def {twice[0]}` with a SEARCH of its lines instead of adding a second one.")
    applied = apply_hunks(old, hunks)
    return "" if applied.ok else describe_failures(applied, path)


def problems(calls: Sequence[ToolCall], errors: Sequence[str], read: Callable[[str], str | None],
             denied: Sequence[Any], wants_action: bool) -> tuple[list[ToolCall], str]:
    """(usable calls, re-ask text): the text is "" when the reply can be used as it is."""
    usable: list[ToolCall] = []
    said: list[str] = []
    noops: list[str] = []
    for n, call in enumerate(calls):
        if any(b.name == call.name and dict(b.arguments) == dict(call.arguments) for b in calls[:n]):
            continue  # the same action twice in one reply: once (the second would fail on the first's result)
        spec = next((d for d in denied if same_call(call, d.call)), None)
        if spec is not None:
            said.append(f"The person said no to exactly this ({call.name} {spec.path}): "
                        f"{spec.description}. Propose something different that follows their words.")
            continue
        if call.name == "edit_file":
            kept = without_noops(call)
            if kept is None:
                noops.append(str(call.arguments.get("path") or ""))
                continue
            call = redefinition_as_replacement(kept, read)
        problem = repetition_problem(call) if call.name in ("write_file", "edit_file") else ""
        problem = problem or (edit_problem(call, read) if call.name == "edit_file" else "")
        problem = problem or (python_problem(call, read) if call.name in ("write_file", "edit_file") else "")
        if problem:
            said.append(problem)
            continue
        usable.append(call)
    if noops and not any(c.name in ("write_file", "edit_file") for c in usable):
        said.append(f"Your edit of {noops[0]} changes nothing: its SEARCH and REPLACE are the same. "
                    "Write the changed lines in REPLACE.")  # (beside a real change it is only dropped)
    if errors and not usable:
        said.insert(0, "Your reply could not be read: " + "; ".join(errors[:3])
                    + ". Answer again with Sym-Ops lines only, in the form shown.")
    elif not calls and wants_action and not said:
        said.append("Your reply had no action. Write the action the task needs.")
    return usable, "\n\n".join(said)
