"""The lean streaming reader (streamfast.py) changes nothing but speed.

Reference: the full Scanner path (`sp.st = 3`) fed one character at a time gives, for every
item, the index of the character that completed it. Fed in any other pieces (empty ones
included), the lean reader must emit the same items, equal field by field, in the piece that
holds that character; items completed only by `finish()` come in `tail_events`; and
`finish()` must equal `parse(text)`. Texts are random: canonical replies, CRLF, blocks whose
longer fences hold `--` lookalikes, truncation at any point, and prose.
"""

from __future__ import annotations

import random
from dataclasses import asdict
from typing import Any

import pytest

from duckflow.protocols.symops import parse
from duckflow.protocols.symops.model import Action
from duckflow.protocols.symops.streaming import StreamEvent, StreamingProcessor

Item = tuple[str, Any]


def _item(ev: StreamEvent) -> Item:
    return (ev.kind, asdict(ev.item) if isinstance(ev.item, Action) else ev.item)


def _reference(text: str) -> tuple[list[tuple[int, Item]], list[Item], dict[str, Any]]:
    """(char index completing each item, items completed by finish, final) via the Scanner."""
    sp = StreamingProcessor()
    sp.st = 3  # the full Scanner from the start
    timed = [(i, _item(ev)) for i, ch in enumerate(text) for ev in sp.feed(ch)]
    final = sp.finish().to_dict()
    return timed, [_item(ev) for ev in sp.tail_events], final


def _split(text: str, rng: random.Random) -> list[str]:
    out, i = [], 0
    while i < len(text):
        n = rng.choice([0, 1, 1, 2, 3, 5, 7, 16, 16, 16, 33, 64])
        out.append(text[i : i + n])
        i += n
    return out


def _check(text: str, rng: random.Random, splits: int = 3) -> None:
    timed, tail, final = _reference(text)
    assert final == parse(text).to_dict()
    for _ in range(splits):
        pieces = _split(text, rng)
        expected: list[list[Item]] = []
        start = 0
        for p in pieces:
            end = start + len(p)
            expected.append([it for i, it in timed if start <= i < end])
            start = end
        seen: list[StreamEvent] = []
        sp = StreamingProcessor(on_event=seen.append)
        raw = [list(sp.feed(p)) for p in pieces]
        got = [[_item(ev) for ev in evs] for evs in raw]
        result = sp.finish()
        assert got == expected, (text, pieces)
        assert [_item(ev) for ev in sp.tail_events] == tail, (text, pieces)
        returned = [ev for evs in raw for ev in evs] + sp.tail_events
        assert len(seen) == len(returned) and all(
            a is b for a, b in zip(seen, returned, strict=True)
        )
        assert result.to_dict() == final
        ref = parse(text)
        assert [(a.line, a.fence, a.guess) for a in result.actions] == [
            (a.line, a.fence, a.guess) for a in ref.actions
        ]


_PATHS = ["a.py", "src/app/b.py", "README.md", "tests/", "docs/x y.md", "c.sql"]
_CONTENT = [
    "x = 1", "", "  y = 2", "- item", "-- comment", "--x", "- -", "-", "---", "----", "-- ", "--\t",
    "<<<<<<< SEARCH", "=======", ">>>>>>> REPLACE", "```python", "```", "@@ -1 +1 @@", "$ run @ ls", "~ no",
]  # fmt: skip


def _reply(rng: random.Random) -> str:
    """A canonical reply; a block's fence is longer than any dash-only line in its content."""
    lines: list[str] = []
    for _ in range(rng.randint(0, 8)):
        kind = rng.random()
        if kind < 0.2:
            lines.append("~ " + rng.choice(["plan", "fix it", "", "  spaced  "]))
        elif kind < 0.25:
            lines.append(
                rng.choice(["#c0.9 #m0.8", "#f1", "! Timeout @ a.py", "! Oops", "", "   "])
            )
        else:
            verb = rng.choice(["create", "edit", "write", "delete", "run", "test", "read_file"])
            target = "pytest -q > out.txt" if verb == "run" else rng.choice(_PATHS)
            lines.append(f"$ {verb} @ {target}")
            if verb in ("create", "edit", "write") or rng.random() < 0.2:
                body = [rng.choice(_CONTENT) for _ in range(rng.randint(0, 5))]
                longest = max(
                    (len(b) for b in body if b and b.count("-") == len(b.rstrip(" \t"))), default=0
                )
                fence = "-" * max(2, longest + rng.choice([1, 1, 2]))
                lines += [
                    fence + rng.choice(["", "", " "]),
                    *body,
                    fence + rng.choice(["", "", "  ", "\t"]),
                ]
    return "\n".join(lines) + rng.choice(["", "\n", "\n\n"])


@pytest.mark.parametrize("seed", range(6))
def test_canonical_replies(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(60):
        _check(_reply(rng), rng)


@pytest.mark.parametrize("seed", range(3))
def test_crlf_replies(seed: int) -> None:
    rng = random.Random(100 + seed)
    for _ in range(40):
        text = _reply(rng)
        if rng.random() < 0.5:
            text = text.replace("\n", "\r\n")
        else:  # some lines only
            text = "".join(ln + ("\r\n" if rng.random() < 0.3 else "\n") for ln in text.split("\n"))
        _check(text, rng)


@pytest.mark.parametrize("seed", range(3))
def test_truncated_replies(seed: int) -> None:
    rng = random.Random(200 + seed)
    for _ in range(60):
        text = _reply(rng)
        _check(text[: rng.randint(0, len(text))], rng)


@pytest.mark.parametrize("seed", range(3))
def test_replies_with_prose_and_questions(seed: int) -> None:
    rng = random.Random(300 + seed)
    extra = ["Sure! Here is the plan.", "? Which one?", "  1. this", "  2. that", "```", "**$ run @ ls**",
             "$create @ a.py", "$ create @ `a.py`", "$ create @ a.py (new)", "-- stray", "--"]  # fmt: skip
    for _ in range(50):
        lines = _reply(rng).split("\n")
        for _ in range(rng.randint(1, 3)):
            lines.insert(rng.randint(0, len(lines)), rng.choice(extra))
        _check("\n".join(lines), rng)


def test_lookalike_fences_inside_a_longer_fence_are_content() -> None:
    text = "$ create @ notes.md\n---\n--\n-- x\n--\t\n----\n---\n~ done\n"
    rng = random.Random(1)
    _check(text, rng, splits=20)
    sp = StreamingProcessor()
    for i in range(0, len(text), 3):
        sp.feed(text[i : i + 3])
    assert sp.st != 3  # read by the lean reader alone
    assert sp.finish().actions[0].content == "--\n-- x\n--\t\n----"


def test_closing_fence_at_the_very_end_without_newline() -> None:
    text = "$ create @ a.py\n--\nx\n--  "
    for size in (1, 2, 3, 100):
        sp = StreamingProcessor()
        for i in range(0, len(text), size):
            assert list(sp.feed(text[i : i + size])) == []
        r = sp.finish()
        assert [ev.kind for ev in sp.tail_events] == ["action"]
        assert r.stage == "strict" and r.actions[0].content == "x" and r.actions[0].executable


def test_feed_after_finish_raises() -> None:
    sp = StreamingProcessor()
    sp.feed("~ a\n")
    sp.finish()
    with pytest.raises(RuntimeError):
        sp.feed("~ b\n")


def test_final_validation_of_the_actions_read_by_the_lean_reader() -> None:
    """Only actions not plainly valid, or whose block may be a markdown fence, are re-checked.

    The others are left as read; the final result still equals parse() field by field.
    """
    text = (
        "$ create @ a.py\n--\n```python\nx = 1\n```\n--\n"  # 0: a fence the final result removes
        "$ create @ /etc/x.py\n--\nx\n--\n"  # 1: outside the workspace
        "$ edit @ b.py\n--\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n--\n"  # 2: plain
        "$ read_file @ c.py\n"  # 3: not a canonical type
        "$ create @ d.py\n"  # 4: no content
        "$ edit @ e.py\n--\n--- a/e.py\n+++ b/e.py\n@@ -1 +1 @@\n-a\n+b\n--\n"  # 5: a diff
        "$ delete @ ../f.py\n"  # 6: outside the workspace
        "$ run @ pytest -q\n"  # 7: plain
        "$ create @ notes.md\n--\n```sh\nls\n```\n--\n"  # 8: a fence kept (prose file)
        "$ test @ tests/\n"  # 9: plain
    )
    for size in (1, 7, 16, 1000):
        sp = StreamingProcessor()
        for i in range(0, len(text), size):
            sp.feed(text[i : i + size])
        assert sp.st != 3  # read by the lean reader alone
        result = sp.finish()
        assert sp.check == [0, 1, 3, 4, 5, 6, 8]
        ref = parse(text)
        assert result.to_dict() == ref.to_dict()
        assert [asdict(a) for a in result.actions] == [asdict(a) for a in ref.actions]
        assert result.actions[0].content == "x = 1" and result.actions[2].executable
        assert not result.actions[4].executable  # no content
        assert [w.name for w in result.warnings].count("path_outside_workspace") == 2
