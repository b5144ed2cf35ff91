"""GBNF generation from the protocol definitions (the grammars themselves run in tests/local)."""

from __future__ import annotations

import pytest

from duckflow.protocols.grammar import (
    SymOpsGrammarSpec,
    json_string_rule,
    literal,
    plausible_paths,
    run_commands,
    symops_grammar,
)


def test_literals_escape_what_gbnf_needs() -> None:
    assert literal('a"b\\c\n') == '"a\\"b\\\\c\\n"'


def test_paths_come_from_the_task_and_the_workspace() -> None:
    paths = plausible_paths("Create src/calc.py and fix `util.py`, see notes.txt.", ["README.md", "../x.py"])
    assert paths == ["src/calc.py", "util.py", "notes.txt", "README.md"]
    assert run_commands(["a.py", "test_a.py", "b.txt"]) == [
        "python a.py", "python test_a.py", "python -m pytest -q", "python -m pytest -q test_a.py"]


def test_symops_grammar_has_only_the_allowed_verbs_paths_and_commands() -> None:
    g = symops_grammar(SymOpsGrammarSpec(verbs=("create", "run"), create_paths=["hello.py"],
                                         commands=["python3 hello.py"], new_names=False))
    assert 'create ::= "$ create @ " ( "hello.py" )' in g
    assert 'run ::= "$ run @ " ( "python3 hello.py" )' in g
    assert "delete" not in g and "newname" not in g and "edit ::=" not in g
    assert 'marker ::= "~ next: " ( "CONTINUE" | "DONE" )' in g
    assert "root ::= thought vitals action{1,3} marker" in g
    with pytest.raises(ValueError):
        symops_grammar(SymOpsGrammarSpec(verbs=("edit",), existing=[]))


def test_json_strings_allow_escapes() -> None:
    rule = json_string_rule()
    assert '"\\\\" ( ["\\\\/bfnrt]' in rule and rule.startswith("string ::=")
