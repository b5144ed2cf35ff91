"""The partial reader of a native call's arguments: what it gives out, joined, is what json.loads reads
from the whole text, however the text is cut (inside escapes, \\uXXXX, surrogate pairs), and a value
is said complete only once it is."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from duckflow.llm.partialargs import ArgsReader, Grown

VALUES = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=60)
ARGS = st.dictionaries(st.sampled_from(["path", "content", "command", "note"]),
                       st.one_of(VALUES, st.integers(), st.booleans(), st.lists(st.integers(), max_size=3)),
                       max_size=4)


def read(fragments: list[str]) -> tuple[dict[str, str], list[list[Grown]]]:
    reader = ArgsReader()
    got: dict[str, str] = {}
    steps = []
    for frag in fragments:
        step = reader.feed(frag)
        steps.append(step)
        for g in step:
            if g.text:
                assert not g.done
                got[g.key] = got.get(g.key, "") + g.text
    steps.append(reader.close())
    return got, steps


def cut(text: str, points: list[int]) -> list[str]:
    marks = sorted({p % (len(text) + 1) for p in points})
    return [text[a:b] for a, b in zip([0, *marks], [*marks, len(text)], strict=True)]


@settings(max_examples=300, deadline=None)
@given(args=ARGS, points=st.lists(st.integers(min_value=0), max_size=12),
       ascii_only=st.booleans(), indent=st.sampled_from([None, 2]))
def test_the_decoded_values_are_json_loads_values_on_every_split(
        args: dict[str, object], points: list[int], ascii_only: bool, indent: int | None) -> None:
    text = json.dumps(args, ensure_ascii=ascii_only, indent=indent)
    got, steps = read(cut(text, points))
    strings = {k: v for k, v in json.loads(text).items() if isinstance(v, str)}
    assert got == {k: v for k, v in strings.items() if v}
    done = [g.key for step in steps for g in step if g.done]
    assert sorted(done) == sorted(strings) and len(done) == len(set(done))  # each value said complete once


@settings(max_examples=200, deadline=None)
@given(value=VALUES)
def test_one_character_at_a_time_every_prefix_is_a_prefix_of_the_value(value: str) -> None:
    text = json.dumps({"content": value})  # \uXXXX escapes and surrogate pairs, cut everywhere
    reader = ArgsReader()
    shown = ""
    for ch in text:
        for g in reader.feed(ch):
            shown += g.text
            assert value.startswith(shown)
            assert not g.done  # the only key: complete only when the call is
    assert shown == value
    assert reader.close() == [Grown("content", done=True)]


def test_an_escape_and_a_surrogate_pair_cut_in_two_wait_until_whole() -> None:
    reader = ArgsReader()
    assert reader.feed('{"path": "a.py", "content": "x\\') == [Grown("path", "a.py"), Grown("path", done=True),
                                                               Grown("content", "x")]
    assert reader.feed("n\\ud83d") == [Grown("content", "\n")]
    assert reader.feed("\\ude00 ok\\u00") == [Grown("content", "😀 ok")]
    assert reader.feed('e9"}') == [Grown("content", "é")]
    assert reader.close() == [Grown("content", done=True)]


def test_a_command_is_complete_when_the_next_key_begins() -> None:
    reader = ArgsReader()
    assert reader.feed('{"command": "python3 gre') == [Grown("command", "python3 gre")]
    assert reader.feed('et.py", "time') == [Grown("command", "et.py")]
    assert reader.feed('out": 30}') == [Grown("command", done=True)]


def test_text_that_is_not_an_object_gives_nothing() -> None:
    reader = ArgsReader()
    assert reader.feed('"just a string') == []
    assert reader.feed('"}') == []
    assert ArgsReader().feed("not json at all") == []


@settings(max_examples=100, deadline=None)
@given(args=ARGS, points=st.lists(st.integers(min_value=0), max_size=12))
def test_read_at_most_so_often_the_rest_comes_with_close(args: dict[str, object], points: list[int]) -> None:
    text = json.dumps(args)
    reader = ArgsReader(every_s=3600.0)  # one reading for the first piece, then none until close
    grown = [g for frag in cut(text, points) for g in reader.feed(frag)] + reader.close()
    got: dict[str, str] = {}
    for g in grown:
        got[g.key] = got.get(g.key, "") + g.text
    assert got == {k: v for k, v in json.loads(text).items() if isinstance(v, str)}
