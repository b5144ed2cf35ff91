"""SEARCH/REPLACE hunks: tolerant parsing, the matching ladder, honest failures."""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from duckflow.protocols.editblocks import (
    Hunk,
    apply_hunks,
    describe_failures,
    parse_hunks,
)

SRC = "def f():\n    a = 1\n    return a\n\n\ndef g():\n    return 2\n"


def block(search: str, replace: str, n: int = 7) -> str:
    return f"{'<' * n} SEARCH\n{search}{'=' * n}\n{replace}{'>' * n} REPLACE\n"


def test_no_markers_means_whole_file() -> None:
    assert parse_hunks("print('hi')\n") is None


def test_marker_length_five_to_nine_and_prose_between() -> None:
    text = "edit x.py\n```python\n" + block("a\n", "b\n", 5) + "```\nand\n" + block("c\n", "d\n", 9)
    assert parse_hunks(text) == [Hunk("a\n", "b\n"), Hunk("c\n", "d\n")]


def test_divider_like_line_inside_replace_is_content() -> None:
    hunks = parse_hunks(block("Title\n", "Title\n=======\n"))
    assert hunks == [Hunk("Title\n", "Title\n=======\n")]


def test_exact_rung() -> None:
    r = apply_hunks(SRC, [Hunk("    a = 1\n", "    a = 2\n")])
    assert r.ok and r.applied == ["exact"]
    assert r.text == SRC.replace("a = 1", "a = 2")


def test_indent_rung_adds_offset_to_replace() -> None:
    r = apply_hunks(SRC, [Hunk("a = 1\nreturn a\n", "a = 3\nif a:\n    return a\n")])
    assert r.ok and r.applied == ["indent"]
    assert "    a = 3\n    if a:\n        return a\n" in r.text


def test_indent_rung_removes_offset() -> None:
    r = apply_hunks(SRC, [Hunk("        def g():\n            return 2\n", "        def g():\n            return 3\n")])
    assert r.ok and r.applied == ["indent"]
    assert r.text.endswith("def g():\n    return 3\n")


def test_blank_line_rung() -> None:
    r = apply_hunks(SRC, [Hunk("\n    a = 1\n", "\n    a = 5\n")])
    assert r.ok and r.applied == ["blank_line"]
    assert r.text == SRC.replace("a = 1", "a = 5")


def test_elision_rung() -> None:
    r = apply_hunks(SRC, [Hunk("def f():\n...\n    return a\n", "def f():\n...\n    return a * 2\n")])
    assert r.ok and r.applied == ["elision"]
    assert "    a = 1\n    return a * 2\n" in r.text


def test_ambiguous_search_is_refused() -> None:
    text = "x = 1\n    return\ny = 2\n    return\n"
    r = apply_hunks(text, [Hunk("    return\n", "    return None\n")])
    assert not r.ok and r.text == text
    assert "2 places" in r.failures[0].reason and r.failures[0].closest_line == 2


def test_failure_reports_closest_lines() -> None:
    r = apply_hunks(SRC, [Hunk("def g():\n    return 3\n", "def g():\n    return 4\n")])
    assert not r.ok
    f = r.failures[0]
    assert f.closest == "def g():\n    return 2" and f.closest_line == 6
    msg = describe_failures(r, "m.py")
    assert "line 6" in msg and "return 2" in msg


def test_already_applied_is_said() -> None:
    r = apply_hunks(SRC, [Hunk("    a = 9\n", "    a = 1\n")])
    assert not r.ok and "already" in r.failures[0].reason


def test_empty_search_appends() -> None:
    r = apply_hunks("a\n", [Hunk("", "b\n")])
    assert r.ok and r.text == "a\nb\n" and r.applied == ["append"]
    assert apply_hunks("", [Hunk("", "new\n")]).text == "new\n"


def test_truncated_hunk_never_applies() -> None:
    hunks = parse_hunks(block("a\n", "b\n") + "<<<<<<< SEARCH\nc\n=======\nd\n")
    assert hunks is not None and hunks[1].complete is False
    r = apply_hunks("a\nc\n", hunks)
    assert r.text == "b\nc\n" and not r.ok and "cut off" in r.failures[0].reason


def test_crlf_file_keeps_its_line_endings() -> None:
    r = apply_hunks("a\r\nb\r\n", [Hunk("b\n", "c\n")])
    assert r.ok and r.text == "a\r\nc\r\n"


def test_hunks_apply_in_sequence() -> None:
    r = apply_hunks("one\ntwo\n", [Hunk("one\n", "uno\n"), Hunk("uno\ntwo\n", "uno\ndos\n")])
    assert r.ok and r.text == "uno\ndos\n"


def test_untouched_lines_keep_their_bytes() -> None:
    original = "a\r\nb\nc\x0cd\n\u2028e\nlast"
    r = apply_hunks(original, [Hunk("b\n", "B\n")])
    assert r.ok and r.text == "a\r\nB\nc\x0cd\n\u2028e\nlast"


def test_no_trailing_newline_is_kept() -> None:
    r = apply_hunks("x = 1\ny = 2", [Hunk("y = 2\n", "y = 3\n")])
    assert r.ok and r.text == "x = 1\ny = 3"
    r = apply_hunks("x = 1", [Hunk("", "y = 2\n")])
    assert r.ok and r.text == "x = 1\ny = 2\n"


_line = st.text(alphabet=" abc\t(){}=", max_size=8)


@settings(max_examples=200, deadline=None)
@given(st.lists(_line, min_size=1, max_size=12), st.data())
def test_identity_hunk_never_changes_the_file(lines: list[str], data: st.DataObject) -> None:
    text = "\n".join(lines) + data.draw(st.sampled_from(["", "\n"]))
    i = data.draw(st.integers(0, len(lines) - 1))
    j = data.draw(st.integers(i + 1, len(lines)))
    window = "".join(line + "\n" for line in lines[i:j])
    assume(window.strip())  # a blank SEARCH is the append rule, tested above
    r = apply_hunks(text, [Hunk(window, window)])
    if r.ok:
        assert r.text == text
    else:
        assert r.failures and r.text == text


def test_an_addition_goes_before_a_closing_main_block_and_a_second_def_is_named() -> None:
    from duckflow.protocols.editblocks import duplicate_definitions

    src = "def a():\n    return 1\n\n\nif __name__ == \"__main__\":\n    print(a())\n"
    added = Hunk("", "\n\ndef b():\n    return 2\n")
    r = apply_hunks(src, [added])
    assert r.ok and r.applied == ["add_before_main"]
    assert r.text == ("def a():\n    return 1\n\n\ndef b():\n    return 2\n\n\n"
                      "if __name__ == \"__main__\":\n    print(a())\n")
    assert duplicate_definitions(src, [added]) == []
    assert duplicate_definitions(src, [Hunk("", "def a():\n    return 3\n")]) == ["a"]
    # code after the block (not the end of a script): the addition goes at the end as before
    tail = src + "print('after')\n"
    assert apply_hunks(tail, [added]).text.endswith("def b():\n    return 2\n")


def test_an_addition_that_only_redefines_a_function_replaces_it() -> None:
    from duckflow.protocols.editblocks import as_replacements

    src = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"
    fixed = as_replacements(src, [Hunk("", "\n\ndef add(a, b):\n    return a + b\n")])
    assert fixed is not None
    assert apply_hunks(src, fixed).text == "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
    assert as_replacements(src, [Hunk("", "X = 1\ndef add(a, b):\n    return 0\n")]) is None  # more than the def
    assert as_replacements(src, [Hunk("", "def mul(a, b):\n    return a * b\n")]) is None  # a new name: no change
