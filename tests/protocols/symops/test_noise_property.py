"""Repair never changes what a valid reply means: noise around it gives the same actions or fewer.

A valid reply (canonical Sym-Ops, blocks whose content holds `--`, `---`, code fences, `$ ...`
lines, `</think>`, YAML/SQL/markdown) is wrapped in the noise the repair stage exists to
remove. The executable actions read from the noisy text must be among the ones the valid text
means (never a different or an extra one); `noisy_reply` is shared with `duckflow bench
protocols`, which runs the same check over 20,000 variants.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from duckflow.protocols.symops import parse
from duckflow.protocols.symops.noise import NOISE_KINDS, noisy_reply, random_valid_reply, unintended


@settings(max_examples=3000, deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1), st.sets(st.sampled_from(NOISE_KINDS), min_size=1, max_size=3))
def test_noise_never_adds_or_changes_an_executable_action(seed: int, kinds: set[str]) -> None:
    rng = random.Random(seed)
    valid = random_valid_reply(rng)
    truth = parse(valid)
    assert truth.stage == "strict", valid
    noisy = noisy_reply(valid, rng, sorted(kinds))
    got = parse(noisy)
    assert unintended(truth, got) == [], (valid, noisy)


ISSUE_REPLY = "$ create @ NOTES.md\n--\nAfter this I will write:\n$ create @ x.py\n--\n$ create @ a.sql\n---\nSELECT 1;\n--\n---\n"


def _keys(text: str) -> list[tuple[object, ...]]:
    return [a.key() for a in parse(text).actions if a.executable]


def test_the_issue_reply_with_a_prose_line_in_front_means_the_same() -> None:
    want = _keys(ISSUE_REPLY)
    assert [k[2] for k in want] == ["NOTES.md", "a.sql"]
    assert _keys("Here you go:\n" + ISSUE_REPLY) == want
    assert _keys(ISSUE_REPLY.replace("\n", "\r\n")) == want
    assert _keys("```\n" + ISSUE_REPLY + "```\n") == want
    assert _keys("<think>\nplan it\n</think>\n" + ISSUE_REPLY + "\nDone.\n") == want


def test_a_think_tag_line_inside_a_block_is_content() -> None:
    reply = "$ create @ notes.md\n--\nbefore\n</think>\nafter\n--\n$ run @ ls\n"
    res = parse(reply)
    assert res.stage == "strict"
    assert [a.content for a in res.actions] == ["before\n</think>\nafter", None]
    noisy = parse("Sure.\n" + reply)
    assert [a.key() for a in noisy.actions if a.executable] == [a.key() for a in res.actions]


def test_seed_missing_symbols_repair_runs_a_declared_block() -> None:
    res = parse("create auth.py\n--\nimport os\n--\n")
    (a,) = res.actions
    assert (a.type, a.path, a.content, a.executable) == ("create", "auth.py", "import os", True)
    assert res.stage == "repaired" and a.confidence < 1.0
    assert "missing_symbols" in [r.name for r in res.repairs]


def test_prose_mentioning_a_verb_and_file_stays_a_guess() -> None:
    res = parse("I would create auth.py for this.\n")
    assert [a.executable for a in res.actions] == [False]


def test_prose_naming_two_actions_proposes_both() -> None:
    res = parse("You should edit main.py and then delete old.py.")
    assert [(a.type, a.path, a.executable) for a in res.actions] == [
        ("edit", "main.py", False), ("delete", "old.py", False)]  # fmt: skip
