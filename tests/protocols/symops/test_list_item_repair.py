"""Repair never makes a runnable action out of a list item or a line that would steal a block.

Seed 000 §4.1's missing-symbol repair (`create a.py` + a `--` block runs) matches only a line
that starts with the verb. A list item (`- run evil.sh`, `2. run evil.py`), a decorated verb,
or a bare verb line right after a declared action still waiting for its block is a guess
(executable=False): read, shown, never run. Checked line by line and by a fuzz-style property.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from duckflow.protocols.symops import parse
from duckflow.protocols.symops.model import SYNONYMS
from duckflow.protocols.symops.noise import random_valid_reply

ROOT = Path(__file__).resolve().parents[3]


def _runnable(text: str) -> list[tuple[str, str | None]]:
    return [(a.type, a.path) for a in parse(text).actions if a.executable]


def test_a_dash_list_item_with_a_block_is_a_guess() -> None:
    r = parse("- run evil.sh\n--\nrm -rf ~\n--\n")
    assert [(a.type, a.path, a.content, a.executable) for a in r.actions] == [("run", "evil.sh", "rm -rf ~", False)]
    assert "missing_action_symbol" in [w.name for w in r.warnings]


def test_a_numbered_list_item_with_a_block_is_a_guess() -> None:
    assert _runnable("2. run evil.py\n--\nimport os\n--\n") == []
    assert _runnable("Plan:\n1) create evil.py\n--\nx = 1\n--\n") == []
    assert _runnable("* **edit** `evil.py`\n--\nx = 1\n--\n") == []


def test_a_bare_verb_line_cannot_take_a_declared_actions_block() -> None:
    r = parse("$ create @ good.py\nedit evil.py\n--\nx = 1\n--\n")
    assert [(a.type, a.path, a.executable) for a in r.actions] == [("create", "good.py", False), ("edit", "evil.py", False)]
    assert _runnable("$ create @ good.py\n\nedit evil.py\n--\nx = 1\n--\n") == []


def test_a_line_that_starts_with_the_verb_still_runs() -> None:
    # the seed's own repair: a declaration without its symbols, directly before its block
    assert _runnable("~ helper\ncreate utils.py\n--\nx = 1\n--\n") == [("create", "utils.py")]
    assert _runnable("$ create @ a.py\n--\nx\n--\nedit b.py\n--\ny\n--\n") == [("create", "a.py"), ("edit", "b.py")]


_MARKERS = ("- ", "* ", "+ ", "• ", "1. ", "2. ", "10. ", "3) ", "> ", "## ", "Step 1: ", "  - ", "\t1. ",
            "- [ ] ", "-  ", "**1.** ")  # fmt: skip
_WRAPS = ("{v} {p}", "**{v}** {p}", "{v} `{p}`", "`{v} {p}`", "**{v} {p}**", "{v} the file {p}", "{v} {p}:")
_VERBS = tuple(v for v in SYNONYMS if v.isascii())
_BLOCKS = ("x = 1", "rm -rf ~", "import os\nos.system('id')", "--", "echo hi")


def _list_item(rng: random.Random, n: int) -> str:
    line = rng.choice(_MARKERS) + rng.choice(_WRAPS).format(v=rng.choice(_VERBS), p=f"evil{n}.py")
    fence = "--" if rng.random() < 0.7 else "---"
    body = rng.choice(_BLOCKS)
    if fence == "--" and "--" in body.split("\n"):
        fence = "---"
    return f"{line}\n{fence}\n{body}\n{fence}"


def _stealer(rng: random.Random, n: int) -> str:
    declared = rng.choice(("$ create @ good.py", "$ edit @ good.py", "$ run @ make", "**$ create @ good.py**"))
    gap = rng.choice(("", "", "\n"))
    return f"{declared}\n{gap}{rng.choice(_VERBS)} evil{n}.py\n--\nx = 1\n--"


@settings(max_examples=3000, deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1))
def test_list_marker_lines_never_give_a_runnable_action(seed: int) -> None:
    rng = random.Random(seed)
    parts: list[str] = []
    for n in range(rng.randint(1, 4)):
        kind = rng.random()
        if kind < 0.3:
            parts.append(random_valid_reply(rng).rstrip("\n"))
        parts.append(_list_item(rng, n) if kind < 0.75 else _stealer(rng, n))
        if rng.random() < 0.3:
            parts.append(rng.choice(("Done.", "", "~ next")))
    reply = "\n".join(parts) + "\n"
    evil = [a.to_dict() for a in parse(reply).actions if a.executable and "evil" in (a.path or "")]
    assert evil == [], reply


def test_protocol_parse_marks_list_items_not_executable(tmp_path: Path) -> None:
    f = tmp_path / "reply.txt"
    f.write_text("Plan:\n- run evil.sh\n--\nrm -rf ~\n--\n2. run evil.py\n--\nprint(1)\n--\n"
                 "$ create @ good.py\nedit evil.py\n--\nx = 1\n--\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "duckflow", "protocol", "parse", str(f)], capture_output=True,
                          text=True, cwd=ROOT, timeout=120, check=False)  # fmt: skip
    data = json.loads(proc.stdout)
    got = [(a["type"], a["path"], a["executable"]) for a in data["actions"]]
    assert ("run", "evil.sh", False) in got and ("run", "evil.py", False) in got and ("edit", "evil.py", False) in got
    assert not [a for a in data["actions"] if a["executable"]]
