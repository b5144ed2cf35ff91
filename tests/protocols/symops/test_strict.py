"""Strict Sym-Ops grammar: every element of seed 000 §2, and content kept byte for byte."""

from __future__ import annotations

from duckflow.protocols.symops import parse

SEED_EXAMPLE = """~ ユーザー認証システムを実装する
~ セキュリティ要件: パスワードのハッシュ化が必須

#c0.88 #m0.85 #f0.95 #s0.78

$ create @ src/auth.py
--
import bcrypt
--

$ create @ tests/test_auth.py > src/auth.py
--
from src.auth import hash_password
--

$ run @ pytest tests/test_auth.py

~ テスト実行後、結果を確認する

#c0.92 #m0.88 #f0.90 #s0.75
"""


def test_seed_example_reads_strictly_with_every_element() -> None:
    r = parse(SEED_EXAMPLE)
    assert r.stage == "strict" and r.ok and r.confidence == 1.0
    assert r.thoughts == ["ユーザー認証システムを実装する", "セキュリティ要件: パスワードのハッシュ化が必須",
                          "テスト実行後、結果を確認する"]  # fmt: skip
    assert r.vitals == {"confidence": 0.92, "mood": 0.88, "focus": 0.90, "stamina": 0.75}
    assert [(a.type, a.path, a.depends_on, a.executable) for a in r.actions] == [
        ("create", "src/auth.py", None, True),
        ("create", "tests/test_auth.py", "src/auth.py", True),
        ("run", "pytest tests/test_auth.py", None, True),
    ]
    assert r.actions[0].content == "import bcrypt"
    assert r.actions[2].content is None


def test_questions_and_model_errors() -> None:
    r = parse('? "bcryptを使用？"\n  1. はい\n  2. いいえ\n! FileNotFound @ config.json\n! Timeout\n')
    assert r.stage == "strict"
    assert [(q.text, q.options) for q in r.questions] == [("bcryptを使用？", ["はい", "いいえ"])]
    d = r.to_dict()
    assert d["errors"] == [
        {"source": "model", "kind": "FileNotFound", "target": "config.json"},
        {"source": "model", "kind": "Timeout", "target": None},
    ]


def test_synonyms_are_normalised_and_the_verb_kept() -> None:
    pairs = {"write": "create", "add": "create", "new": "create", "update": "edit", "modify": "edit",
             "change": "edit", "patch": "edit", "remove": "delete", "rm": "delete", "execute": "run",
             "exec": "run", "shell": "run", "check": "test", "verify": "test", "Create": "create"}  # fmt: skip
    for verb, typ in pairs.items():
        block = "\n--\nx\n--" if typ in ("create", "edit") else ""
        a = parse(f"$ {verb} @ t.py{block}\n").actions[0]
        assert (a.type, a.verb) == (typ, verb)
        assert a.executable


def test_content_is_optional_for_run_delete_test_but_not_create_edit() -> None:
    r = parse("$ run @ pytest -q\n$ delete @ old.py\n$ test @ tests/\n")
    assert r.ok and all(a.executable and a.content is None for a in r.actions)
    r = parse("$ create @ a.py\n$ edit @ b.py\n")
    assert not r.ok and not any(a.executable for a in r.actions)
    assert [i.kind for i in r.issues] == ["missing_content", "missing_content"]
    assert r.issues[1].line == 2


def test_run_keeps_shell_redirect_but_other_types_split_dependency() -> None:
    r = parse("$ run @ pytest > out.txt\n$ test @ tests/test_a.py > a.py\n")
    assert r.actions[0].path == "pytest > out.txt" and r.actions[0].depends_on is None
    assert (r.actions[1].path, r.actions[1].depends_on) == ("tests/test_a.py", "a.py")


PROTOCOL_LOOKING_CONTENT = """---
title: front matter
---
-- SQL comment
  # indented comment
# heading
$ create @ evil.py
~ not a thought
! not an error
? not a question
#c0.1
```python
print("fence inside README")
```
---\t
-----
"""


def test_protocol_looking_content_is_kept_byte_for_byte() -> None:
    text = f"$ create @ README.md\n--\n{PROTOCOL_LOOKING_CONTENT}--\n$ run @ ls\n"
    r = parse(text)
    assert r.stage == "strict"
    assert r.actions[0].content == PROTOCOL_LOOKING_CONTENT[:-1]
    assert [a.path for a in r.actions] == ["README.md", "ls"]
    assert all(a.executable for a in r.actions)


def test_longer_fence_lets_content_hold_a_dash_dash_line() -> None:
    r = parse("$ create @ m.sql\n---\n-- header\n--\nSELECT 1;\n---\n")
    assert r.stage == "strict"
    assert r.actions[0].content == "-- header\n--\nSELECT 1;"


def test_closing_fence_may_have_trailing_spaces() -> None:  # seed §8 problem 1
    r = parse("$ create @ a.py\n--\nx = 1\n--   \n")
    assert r.stage == "strict" and r.actions[0].content == "x = 1"


def test_vitals_on_several_lines_merge() -> None:  # seed §8 problem 3
    r = parse("#c0.85\n#m0.78\n")
    assert r.stage == "strict" and r.vitals == {"confidence": 0.85, "mood": 0.78}


def test_edit_hunks_are_attached() -> None:
    r = parse("$ edit @ a.py\n--\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n--\n")
    a = r.actions[0]
    assert a.hunks == [{"search": "x = 1\n", "replace": "x = 2\n"}] and a.executable


def test_cut_off_hunk_is_not_executable() -> None:
    r = parse("$ edit @ a.py\n--\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n--\n")
    assert not r.actions[0].executable
    assert "incomplete_hunk" in [i.kind for i in r.issues]


def test_unknown_verb_is_kept_as_a_tool_name_with_a_warning() -> None:
    r = parse("$ search_code @ def main\n")
    a = r.actions[0]
    assert (a.type, a.path, a.executable) == ("search_code", "def main", True)
    assert [w.name for w in r.warnings] == ["unknown_action_type"]


def test_empty_reply_fails() -> None:
    r = parse("")
    assert r.stage == "failed" and not r.ok


def test_an_invented_verb_is_shown_but_not_executable() -> None:
    r = parse("$ VERB @ TARGET\n$ read @ a.py\n")
    assert [(a.type, a.executable) for a in r.actions] == [("verb", False), ("read", True)]
    assert r.ok  # a warning, not a reason to re-ask
