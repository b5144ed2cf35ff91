"""Valid Sym-Ops replies wrapped in the noise repair removes, and the check that repair kept them.

Used by the hypothesis property test and by `duckflow bench protocols` (20,000 variants):
`random_valid_reply(rng)` writes a canonical reply whose blocks hold the lines that trip
readers (`--`, `---`, code fences, `$ ...`, `</think>`, YAML/SQL/markdown);
`noisy_reply(text, rng, kinds)` wraps it in prose, CRLF, a whole-reply fence, thinking,
indentation, decorated action lines or blank lines; `unintended(truth, got)` lists the
executable actions of `got` that the valid reply does not mean (must always be empty).
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from duckflow.protocols.symops.model import Action, SymOpsResult
from duckflow.protocols.symops.serializer import action_lines

NOISE_KINDS = ("prose_before", "prose_after", "crlf", "reply_fence", "think", "indent", "decorate", "blank_lines")

_CONTENT = (
    "--", "---", "----", "-- ", "```", "```python", "~~~", "$ create @ x.py", "$ run @ rm -rf build",
    "1. $ delete @ a.py", "</think>", "<think>", "key: value", "- item", "# Title", "## Notes",
    "SELECT 1; -- comment", "~ not a thought", "? not a question", "! not an error", "#c0.9",
    "  indented", "def f():", "    return 1", "", "x = 1", "**bold**", "Here you go:",
    "create auth.py", "name: demo", "  - nested: true", "@decorator", "> quoted", "    ", "\t",
)  # fmt: skip
_PATHS = ("main.py", "src/app.py", "NOTES.md", "config.yaml", "db/a.sql", "README.md", "web/x.ts")
_PROSE_BEFORE = ("Here you go:", "Sure! Here is the change.", "I'll create main.py now.", "Okay.",
                 "Let me edit config.yaml and then run the tests.", "Plan: create a.py", "---")  # fmt: skip
_PROSE_AFTER = ("Let me know if you need anything else.", "Done.", "This creates x.py as requested.",
                "Next I would delete old.py.", "```", "--")  # fmt: skip
_THINK = ("<think>\nI could write:\n$ create @ evil.py\n--\nbad\n--\n</think>\n",
          "Reasoning about the files first.\n</think>\n", "<thinking>\nshort\n</thinking>\n\n")  # fmt: skip
_DECOR = ("**{}**", "1. {}", "- {}", "`{}`", "> {}", "* {}", "Step 1: {}", "  {}")


def _content(rng: random.Random) -> str:
    lines = [rng.choice(_CONTENT) for _ in range(rng.randint(1, 6))]
    if not any(ln.strip() for ln in lines):
        lines.append("x = 1")
    return "\n".join(lines)


def _action(rng: random.Random) -> Action:
    verb = rng.choice(("create", "create", "write", "edit", "delete", "run", "run", "test", "read_file"))
    path = rng.choice(_PATHS)
    if verb in ("create", "write", "edit"):
        return Action(verb if verb != "write" else "create", verb, path, _content(rng))
    if verb == "run":
        cmd = rng.choice(("pytest -q", "ls > out.txt", "echo '--'", "make test", ""))
        content = _content(rng) if not cmd or rng.random() < 0.3 else None
        return Action("run", "run", cmd or None, content)
    if verb == "test":
        return Action("test", "test", rng.choice((None, "tests/test_a.py", "pytest -q tests")))
    return Action(verb, verb, path)


def random_valid_reply(rng: random.Random) -> str:
    """A canonical reply: thoughts, maybe vitals, 1-4 actions with tricky blocks, maybe a question."""
    out = [f"~ {rng.choice(('plan the change', 'read first', 'two files'))}" for _ in range(rng.randint(0, 2))]
    if rng.random() < 0.4:
        out.append("#c0.9 #m0.7")
    for _ in range(rng.randint(1, 4)):
        out.extend(action_lines(_action(rng)))
    if rng.random() < 0.2:
        out += ['? "Which one?"', "  1. this", "  2. that"]
    return "\n".join(out) + "\n"


def _heads(lines: list[str]) -> set[int]:
    """Indexes of the action lines outside blocks of a canonical reply."""
    heads: set[int] = set()
    i = 0
    while i < len(lines):
        if lines[i].startswith("$ "):
            heads.add(i)
            if i + 1 < len(lines) and lines[i + 1][:2] == "--":
                fence = lines[i + 1]
                j = i + 2
                while lines[j] != fence:
                    j += 1
                i = j
        i += 1
    return heads


def noisy_reply(text: str, rng: random.Random, kinds: list[str] | tuple[str, ...]) -> str:
    """`text` (canonical) wrapped in the noise `kinds` name, in a realistic order."""
    lines = text.rstrip("\n").split("\n")
    heads = _heads(lines)
    if "decorate" in kinds or "blank_lines" in kinds:
        new: list[str] = []
        for i, ln in enumerate(lines):
            if i in heads and "blank_lines" in kinds and new:
                new.append("")
            new.append(rng.choice(_DECOR).format(ln) if i in heads and "decorate" in kinds else ln)
        lines = new
    if "prose_before" in kinds:
        lines = [rng.choice(_PROSE_BEFORE), *([""] if rng.random() < 0.5 else []), *lines]
    if "prose_after" in kinds:
        lines = [*lines, *([""] if rng.random() < 0.5 else []), rng.choice(_PROSE_AFTER)]
    if "reply_fence" in kinds:
        lines = [rng.choice(("```", "```symops", "```text")), *lines, "```"]
    if "indent" in kinds:
        pad = rng.choice(("  ", "    "))
        lines = [pad + ln if ln else ln for ln in lines]
    out = "\n".join(lines) + "\n"
    if "think" in kinds:
        out = rng.choice(_THINK) + out
    if "crlf" in kinds:
        out = out.replace("\n", "\r\n")
    return out


def unintended(truth: SymOpsResult, got: SymOpsResult) -> list[dict[str, Any]]:
    """Executable actions of `got` that `truth` does not have (counted: a duplicate is extra)."""
    left = Counter(a.key() for a in truth.actions if a.executable)
    extra = []
    for a in got.actions:
        if not a.executable:
            continue
        if left[a.key()] > 0:
            left[a.key()] -= 1
        else:
            extra.append(a.to_dict())
    return extra
