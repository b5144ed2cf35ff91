"""Any text at all: parse never raises, streaming equals one-shot, guesses never run."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from duckflow.protocols.symops import parse
from duckflow.protocols.symops.streaming import StreamingProcessor

_pieces = st.sampled_from([
    "$ ", "$", "@ ", "@", " > ", "~ ", "#c0.5 ", "#m", "? ", "! ", "--", "---", "-", "```", "```python",
    "~~~", "**", "`", "- ", "1. ", "  ", "\t", "\n", "\n", "\n", "\r\n", "create ", "edit ", "run ",
    "write ", "a.py", "src/b.md", "x = 1", "<think>", "</think>", "<<<<<<< SEARCH", "=======",
    ">>>>>>> REPLACE", "ー", "—", "＄", "confidence: 0.7", "(new)", ":", "\"",
])  # fmt: skip
_text = st.lists(_pieces, max_size=60).map("".join)


@settings(max_examples=400, deadline=None)
@given(_text, st.integers(1, 7))
def test_any_text_parses_and_streams_to_the_same_result(text: str, size: int) -> None:
    one = parse(text)
    sp = StreamingProcessor()
    for i in range(0, len(text), size):
        sp.feed(text[i : i + size])
    assert sp.finish().to_dict() == one.to_dict()
    for a in one.actions:
        if a.executable:
            assert a.guess is None and a.path is not None or a.type in ("run", "test")
    if one.stage == "strict":
        assert not one.repairs
