"""parse(serialize(x)) == x for any result, and the canonical form is compact."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from duckflow.protocols.symops import (
    Action,
    Note,
    Question,
    SymOpsResult,
    normalize_verb,
    parse,
    serialize,
)
from duckflow.protocols.symops.serializer import safe_fence

_line = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="\n\r\x0b\x0c\x1c\x1d\x1e\x85"),
    max_size=30,
).map(str.strip)
_word = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,10}", fullmatch=True)
_path = st.from_regex(r"[A-Za-z0-9_.][A-Za-z0-9_./ -]{0,20}[A-Za-z0-9_]", fullmatch=True)
_content_line = st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"), max_size=20),
    st.sampled_from(["--", "---", "-- x", "$ create @ x", "~ t", "# c", "```", "```python", "  --", "--  "]),
)
_content = st.one_of(st.none(), st.lists(_content_line, max_size=6).map("\n".join))


@st.composite
def actions(draw: st.DrawFn) -> Action:
    verb = draw(st.one_of(st.sampled_from(["create", "edit", "write", "Update", "run", "rm", "test"]), _word))
    typ = normalize_verb(verb)
    content = draw(_content)
    if typ in ("create", "edit") and content is None:
        content = ""
    path = draw(_path).strip()
    dep = None if typ == "run" else draw(st.one_of(st.none(), _path.map(str.strip)))
    if typ == "edit" and content and "<<<<<<<" in content:
        content = None
    return Action(typ, verb, path, content, dep or None)


@st.composite
def results(draw: st.DrawFn) -> SymOpsResult:
    vitals = draw(st.dictionaries(st.sampled_from(["confidence", "mood", "focus", "stamina"]),
                                  st.floats(0, 1, allow_nan=False)))  # fmt: skip
    option = _line.filter(lambda o: bool(o) and not re.match(r"\$\s*[^\s@]+\s*@", o))
    qs = draw(st.lists(st.builds(Question, _line, st.lists(option, max_size=3)), max_size=2))
    notes = draw(st.lists(st.builds(Note, _word, st.one_of(st.none(), _path.map(str.strip))), max_size=2))
    return SymOpsResult(
        thoughts=draw(st.lists(_line, max_size=3)),
        vitals=vitals,
        actions=draw(st.lists(actions(), max_size=4)),
        questions=qs,
        notes=notes,
    )


@settings(max_examples=300, deadline=None)
@given(results())
def test_parse_of_serialize_is_identity(r: SymOpsResult) -> None:
    text = serialize(r)
    back = parse(text)
    assert back.semantic() == r.semantic(), text
    if text:
        assert back.stage == "strict"


def test_vitals_written_only_when_present() -> None:
    r = SymOpsResult(thoughts=["x"], vitals={"mood": 0.5})
    assert serialize(r) == "~ x\n#m0.5\n"
    assert "#" not in serialize(SymOpsResult(thoughts=["x"]))


def test_fence_grows_only_when_content_needs_it() -> None:
    assert safe_fence(["a", "-- x"]) == "--"
    assert safe_fence(["--", "---  "]) == "----"
    text = serialize(SymOpsResult(actions=[Action("create", "create", "a.sql", "--\nSELECT 1;")]))
    assert text == "$ create @ a.sql\n---\n--\nSELECT 1;\n---\n"


def test_content_that_is_one_code_fence_keeps_it_through_a_longer_fence() -> None:
    r = SymOpsResult(actions=[Action("create", "create", "a.py", "```python\nx = 1\n```")])
    text = serialize(r)
    assert text.split("\n")[1] == "---"
    assert parse(text).semantic() == r.semantic()


@settings(max_examples=500, deadline=None)
@given(st.sampled_from(["create", "edit", "run", "delete"]),
       st.one_of(st.none(), st.lists(st.sampled_from(["", "--", "---", "x", "```", "```python", "a -- b"]),
                                     max_size=5).map("\n".join)),
       st.sampled_from(["a.py", "a.md", None]))  # fmt: skip
def test_action_text_is_the_joined_action_lines(typ: str, content: str | None, path: str | None) -> None:
    from duckflow.protocols.symops.model import Action
    from duckflow.protocols.symops.serializer import action_lines, action_text

    action = Action(typ, typ, path, content)
    assert action_text(action) == "\n".join(action_lines(action))
