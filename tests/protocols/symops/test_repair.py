"""AutoRepair and the fuzzy stage: named repairs, content untouched, nothing guessed runs."""

from __future__ import annotations

from duckflow.protocols.symops import parse, repair_text


def names(text: str) -> list[str]:
    r = parse(text)
    return [x.name for x in r.repairs] + [w.name for w in r.warnings]


def test_each_of_the_seed_five_rules_is_named() -> None:
    assert "markdown_fence_block" in names("$ create @ a.py\n```python\nx = 1\n```\n")
    assert "missing_at" in names("$ create a.py\n--\nx\n--\n")
    assert "markdown_rule_dropped" in names("~ a\n---\n$ run @ ls\n")
    assert "indented_protocol_line" in names("  $ run @ ls\n~ x\n")
    assert "vitals_format" in names("confidence: 0.8, mood: 0.5\n$ run @ ls\n")


def test_repairs_never_touch_a_closed_block() -> None:
    content = "---\n  $ create @ x\n```python\n**bold**\n  # c\nconfidence: 0.5\n-- sql"
    r = parse(f"Sure!\n**$ create @ `doc.md`**\n--\n{content}\n--\nBye\n")
    assert r.stage == "repaired"
    assert [(a.path, a.content, a.executable) for a in r.actions] == [("doc.md", content, True)]


def test_confidence_comes_from_named_penalties() -> None:
    clean = parse("$ create @ a.py\n--\nx\n--\n")
    fenced = parse("$ create @ a.py\n```\nx\n```\n")
    worse = parse("**$ create a.py**\n```\nx\n```\n")
    assert clean.confidence == 1.0 > fenced.confidence > worse.confidence > 0.5
    assert fenced.actions[0].confidence < 1.0 and fenced.actions[0].executable


def test_truncated_block_is_returned_but_not_executable() -> None:
    r = parse("$ create @ a.py\n--\nx = 1\n--\n$ create @ b.py\n--\ny = ")
    assert [(a.path, a.executable) for a in r.actions] == [("a.py", True), ("b.py", False)]
    assert r.actions[1].content == "y = "
    assert not r.ok and r.issues[0].kind == "unclosed_block" and r.issues[0].line == 5


def test_orphan_code_block_is_proposed_without_an_invented_name() -> None:
    r = parse("Here:\n```python\nprint(1)\n```\n")
    assert r.stage == "fuzzy"
    a = r.actions[0]
    assert (a.path, a.content, a.executable) == (None, "print(1)", False)
    assert "file_0" not in repr(r.to_dict())


def test_path_from_request_and_prose_is_a_non_executable_guess() -> None:
    r = parse("```python\nx = 2\n```\n", request="fix calc.py")
    assert (r.actions[0].path, r.actions[0].executable) == ("calc.py", False)
    assert "path_from_request" in [w.name for w in r.warnings]
    r = parse("I will create helpers.py now.")
    assert [(a.type, a.path, a.executable) for a in r.actions] == [("create", "helpers.py", False)]


def test_think_block_is_dropped_with_its_fake_actions() -> None:
    r = parse("<think>\n$ delete @ everything\n</think>\n$ run @ ls\n")
    assert [a.path for a in r.actions] == ["ls"]
    assert "thinking_removed" in [x.name for x in r.repairs]


def test_repair_text_is_canonical_and_reparses_strictly() -> None:
    text, repairs = repair_text("```symops\n- **$ create @ `a.py`**\n```python\nx\n```\n```\n")
    assert text == "$ create @ a.py\n--\nx\n--\n"
    assert parse(text).stage == "strict" and repairs


def test_pure_prose_fails_with_a_named_issue() -> None:
    r = parse("I cannot do that.")
    assert r.stage == "failed" and not r.ok and r.issues[0].kind == "no_protocol"
    assert r.confidence == 0.0


def test_issue_lines_refer_to_the_original_reply() -> None:
    r = parse("Intro\n\nMore prose\n$ edit @ a.py\n$ run @ ls\n")
    assert [(i.kind, i.line) for i in r.issues] == [("missing_content", 4)]
