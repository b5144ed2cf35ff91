"""StreamingProcessor: items as soon as complete, any piece size, final == one-shot parse."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from duckflow.protocols.symops import parse
from duckflow.protocols.symops.streaming import StreamEvent, StreamingProcessor

CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "symops"


def pieces(text: str, rng: random.Random) -> list[str]:
    out, i = [], 0
    while i < len(text):
        n = rng.choice([1, 1, 2, 3, 7, 16, 64])
        out.append(text[i : i + n])
        i += n
    return out


@pytest.mark.parametrize("size", [1, 2, 5, 16, 4096])
def test_final_result_equals_one_shot_for_every_corpus_reply(size: int) -> None:
    for reply in sorted(CORPUS.glob("*.txt")):
        text = reply.read_bytes().decode("utf-8")
        sp = StreamingProcessor()
        for i in range(0, len(text), size):
            sp.feed(text[i : i + size])
        assert sp.finish().to_dict() == parse(text).to_dict(), reply.name


def test_random_piece_sizes_give_the_same_result() -> None:
    rng = random.Random(7)
    text = (CORPUS / "001_clean_seed_example.txt").read_text(encoding="utf-8")
    for _ in range(20):
        sp = StreamingProcessor()
        for p in pieces(text, rng):
            sp.feed(p)
        assert sp.finish().to_dict() == parse(text).to_dict()


def test_items_are_emitted_as_soon_as_they_are_complete() -> None:
    sp = StreamingProcessor()
    seen: list[tuple[int, StreamEvent]] = []
    text = "~ plan\n$ create @ a.py\n--\nx = 1\n--\n$ run @ pytest\n? ok?\n  1. yes\n#c0.9\n"
    for i, ch in enumerate(text):
        for ev in sp.feed(ch):
            seen.append((i, ev))
    kinds = [(i, ev.kind) for i, ev in seen]
    assert kinds[0] == (text.index("\n"), "thought")  # at the end of its line
    close = text.index("--\n$ run") + 2
    assert (close, "action") in kinds  # when the closing fence line ends
    assert (text.index("? ok?"), "action") in kinds  # `run` is complete once the next line begins
    r = sp.finish()
    assert [ev.kind for ev in sp.tail_events] == []
    assert [a.path for a in r.actions] == ["a.py", "pytest"]


def test_executable_in_events_only_while_the_stream_is_strict() -> None:
    sp = StreamingProcessor()
    events = sp.feed("$ create @ a.py\n--\nx\n--\nsome prose\n$ run @ ls\n~ end\n")
    actions = [ev.item for ev in events if ev.kind == "action"]
    assert [(a.path, a.executable) for a in actions] == [("a.py", True), ("ls", False)]
    final = sp.finish()
    assert [(a.path, a.executable) for a in final.actions] == [("a.py", True), ("ls", True)]


def test_cut_off_block_at_finish_is_not_executable() -> None:
    sp = StreamingProcessor()
    sp.feed("$ create @ a.py\n--\nx = ")
    r = sp.finish()
    assert r.actions[0].executable is False
    assert [ev.kind for ev in sp.tail_events] == ["action"]


async def test_async_stream_yields_items() -> None:
    async def source():  # type: ignore[no-untyped-def]
        for ch in "~ a\n~ b\n$ run @ ls\n":
            yield ch

    sp = StreamingProcessor()
    kinds = [ev.kind async for ev in sp.stream(source())]
    assert kinds == ["thought", "thought", "action"]
    assert sp.final is not None and sp.final.actions[0].path == "ls"


@pytest.mark.parametrize("size", [1, 3])
def test_thousands_of_pieces_are_packed_and_change_nothing(size: int) -> None:
    """More than 4,096 pieces: they are packed as they come (inside a long block too)."""
    body = "\n".join(f"row {i} -- not a fence" for i in range(700))
    text = ("~ start\n$ create @ big.py\n--\n" + body + "\n--\nprose in the middle\n"
            "$ create @ b.md\n---\n--\n" + body[:3000] + "\n---\n$ run @ ls\n")  # fmt: skip
    sp = StreamingProcessor()
    for i in range(0, len(text), size):
        sp.feed(text[i : i + size])
    assert len(text) // size > 4096 and len(sp.pieces) < 4200
    assert sp.text == text
    assert sp.finish().to_dict() == parse(text).to_dict()
