"""One reader, any piece size: streaming emits the same items as one feed and ends as parse;
the one-hunk fast path == parse_hunks."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from duckflow.protocols.editblocks import parse_hunks
from duckflow.protocols.symops import parse
from duckflow.protocols.symops.model import Action, SymOpsResult
from duckflow.protocols.symops.scanner import strict_scan
from duckflow.protocols.symops.streaming import StreamingProcessor
from duckflow.protocols.symops.validator import attach_hunks

CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "symops"

# lines as canonical text and its near misses have them (content lines included)
_LINES = [
    "~ plan", "~", "$ create @ a.py", "$ edit @ src/b.py", "$ run @ pytest -q > out.txt",
    "$ delete @ old.txt", "$ test @ tests/", "$ test @ a.py > b.py", "$ read_file @ x.py",
    "$ create @ a.py (new)", "$ create @ `a.py`", "$  create @ a.py", "$create @ a.py", "$ create @",
    "--", "---", "--  ", "-- users", "- item", "-", "----", "x = 1", "", "   ", "\t",
    "#c0.9 #m0.8", "#c0.9x", "# heading", "! Error @ a.py", "! Oops", "? ok?", "  1. yes",
    "<<<<<<< SEARCH", "=======", ">>>>>>> REPLACE", "prose line", "~ end\r", "$ run @ ls\r",
]  # fmt: skip
_text = st.lists(st.sampled_from(_LINES), max_size=30).map("\n".join)
_end = st.sampled_from(["", "\n", "\n\n"])


def _same(a: SymOpsResult, b: SymOpsResult) -> None:
    assert a.to_dict() == b.to_dict()
    assert [(x.line, x.fence, x.guess) for x in a.actions] == [(x.line, x.fence, x.guess) for x in b.actions]
    assert a.text == b.text


def _events(sp: StreamingProcessor, text: str, size: int) -> list[list[tuple[str, Any]]]:
    out = []
    for i in range(0, len(text), size):
        out.append([(ev.kind, asdict(ev.item) if isinstance(ev.item, Action) else ev.item)
                    for ev in sp.feed(text[i : i + size])])  # fmt: skip
    sp.finish()
    out.append([(ev.kind, asdict(ev.item) if isinstance(ev.item, Action) else ev.item) for ev in sp.tail_events])
    return out


@settings(max_examples=400, deadline=None)
@given(_text, _end, st.sampled_from([1, 2, 3, 5, 16, 64]))
def test_piece_size_changes_no_item_and_the_end_is_parse(text: str, end: str, size: int) -> None:
    text += end
    small, whole = StreamingProcessor(), StreamingProcessor()
    flat = [ev for piece in _events(small, text, size) for ev in piece]
    assert flat == [ev for piece in _events(whole, text, len(text) or 1) for ev in piece]
    assert small.finish().to_dict() == parse(text).to_dict()
    sc = strict_scan(text)
    if not sc.violations:
        _same(small.finish(), parse(text))


def test_empty_pieces_and_a_closing_fence_split_across_pieces() -> None:
    text = "$ create @ a.py\n--\n- x\n-- y\n--\n$ run @ ls\n"
    pieces = ["$ create @ a.py\n-", "-\n- x\n", "", "-", "", "- y\n", "-", "", "-", "\n$ run", " @ ls\n"]
    assert "".join(pieces) == text
    sp = StreamingProcessor()
    kinds = [[ev.kind for ev in sp.feed(p)] for p in pieces]
    assert kinds[8] == [] and kinds[9] == ["action"]  # the block ends when its fence line does
    assert sp.finish().actions[0].content == "- x\n-- y"


def test_an_unclosed_block_at_the_end_is_not_runnable() -> None:
    sp = StreamingProcessor()
    sp.feed("~ a\n$ create @ a.py\n--\nx = ")
    r = sp.finish()
    assert r.stage != "strict" and not r.actions[0].executable
    assert [ev.kind for ev in sp.tail_events] == ["action"]


_hunk_body = st.lists(st.sampled_from(["x = 1", "", "  y", "====", "<<<<", ">>>>", "a=b", "SEARCH"]),
                      max_size=4).map(lambda ls: "".join(s + "\n" for s in ls))  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(_hunk_body, _hunk_body, st.sampled_from(["", "\n", "\ntrailing prose"]),
       st.sampled_from(["<<<<<<< SEARCH\n", "<<<<< SEARCH\n", " <<<<<<< SEARCH\n"]))  # fmt: skip
def test_one_hunk_fast_path_equals_parse_hunks(search: str, replace: str, tail: str, head: str) -> None:
    content = f"{head}{search}=======\n{replace}>>>>>>> REPLACE{tail}"
    act = Action("edit", "edit", "a.py", content)
    attach_hunks(act)
    hunks = parse_hunks(content)
    assert hunks is not None
    complete = [{"search": h.search, "replace": h.replace} for h in hunks if h.complete]
    assert act.hunks == complete
    assert (act.guess == "incomplete_hunk") == (not all(h.complete for h in hunks))


def test_on_event_sees_each_item_once() -> None:
    seen: list[str] = []
    sp = StreamingProcessor(on_event=lambda ev: seen.append(ev.kind))
    returned: list[str] = []
    text = "~ a\n$ run @ ls\n$ create @ a.py\n--\nx\n--\nprose here\n~ b\n$ delete @ c.py\n"
    for i in range(0, len(text), 4):
        returned += [ev.kind for ev in sp.feed(text[i : i + 4])]
    sp.finish()
    returned += [ev.kind for ev in sp.tail_events]
    assert seen == returned == ["thought", "action", "action", "thought", "action"]
