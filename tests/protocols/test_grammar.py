"""GBNF generation from the protocol definitions (the grammars themselves run in tests/local)."""

from __future__ import annotations

import re
from pathlib import Path

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


ACTION = re.compile(r"^\$ (create|edit|run|delete) @ ", re.M)
EDITED = {"calc.py": "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n",
          "odd.md": "---\n<<<<<<< x\nok\n   \n``` py\n--- \n"}


@pytest.mark.parametrize("seed", range(4))
def test_every_symops_reply_the_grammar_allows_decodes_strictly(seed: int, tmp_path: Path) -> None:
    from duckflow.config import WorkspaceConfig
    from duckflow.protocols.editblocks import apply_hunks, parse_hunks
    from duckflow.protocols.symops.codec import SymOpsCodec
    from duckflow.workspace.tools import workspace_tools
    from tests.helpers.gbnf_walk import Walker

    specs = [t.spec for t in workspace_tools(tmp_path, WorkspaceConfig())]
    g = symops_grammar(SymOpsGrammarSpec(
        verbs=("create", "edit", "run", "delete"), create_paths=["calc.py", "a.py"], existing=["calc.py"],
        commands=["python3 a.py"], min_actions=0, edit_files=EDITED, run_args=True))
    walker = Walker(g, seed=seed, star_max=6)
    edits = 0
    for _ in range(300):
        text = walker.sample()
        d = SymOpsCodec().decode(text, specs)
        assert not (d.repairs or d.warnings or d.errors), (text, d.repairs, d.warnings, d.errors)
        assert all(c.executable for c in d.calls) and len(d.calls) == len(ACTION.findall(text)), text
        for c in d.calls:
            if c.name == "execute_shell":  # arguments are plain words: nothing else reaches the shell
                # the listed script, or a new one of a plain name (new names are allowed here)
                assert re.fullmatch(r"python3 (a|[a-z_][a-z0-9_]*(/[a-z_][a-z0-9_]*)?)\.py( [A-Za-z0-9_.,=+/-]+){0,4}",
                                    c.arguments["command"]), text
                words = c.arguments["command"].split()[2:]  # no option, absolute path, `..` or dot-name
                assert not any(p[:1] in ("-", ".", "/", "") for w in words for p in w.split("/")), text
            if c.name == "write_file":  # a pasted edit example: no marker line in a file's text
                assert not re.search(r"(?m)^(<{5}|={5}|>{5})", c.arguments["content"]), text
            if c.name == "edit_file":  # hunks whose SEARCH is a run of the file's lines (or empty)
                edits += 1
                original = EDITED[c.arguments["path"]]
                hunks = parse_hunks(c.arguments["content"]) or []
                assert hunks and all(h.complete and h.search in original for h in hunks), text
                assert apply_hunks(original, hunks).applied or any(original.count(h.search) > 1 for h in hunks)
    assert edits > 20


def test_edit_hunks_search_only_consecutive_file_lines() -> None:
    g = symops_grammar(SymOpsGrammarSpec(verbs=("edit",), edit_files={"u.py": "a = 1\nb = 2\n---\nc = 3\n"}))
    assert '$ edit @ " "u.py"' in g and "hunk0{1,3}" in g
    assert 'f0x0 ::= "a = 1\\n" f0x1?' in g and 'f0x1 ::= "b = 2\\n"\n' in g  # `---` breaks the run
    assert "f0x2" not in g and 'f0x3 ::= "c = 3\\n"' in g
    assert "search0? " in g  # empty SEARCH: append at the end


def test_file_names_in_a_japanese_task_are_found_without_spaces() -> None:
    assert plausible_paths("hello.pyを作成して「こんにちは」と表示", []) == ["hello.py"]
    assert plausible_paths("src/app.pyに関数main()を追加", []) == ["src/app.py"]


def test_an_edit_without_the_files_text_may_still_write_hunks() -> None:
    # the two-call Specialized reply: `edit` of an existing file takes a whole file or hunks
    g = symops_grammar(SymOpsGrammarSpec(verbs=("create", "edit"), create_paths=["a.py"], existing=["a.py"],
                                         new_names=False))
    assert 'edit ::= "$ edit @ " ( "a.py" ) "\\n" eblock' in g and "emark" in g
    assert 'create ::= "$ create @ " ( "a.py" ) "\\n" block' in g  # a created file holds no marker line


def test_run_arguments_cannot_be_options_absolute_paths_or_parent_folders() -> None:
    # `python3 -m pytest -q test_a.py --basetemp=src` deletes src/; `-o`, `/etc/x`, `../x`
    from tests.helpers.gbnf_walk import Walker

    g = symops_grammar(SymOpsGrammarSpec(verbs=("run",), commands=["python3 -m pytest -q test_a.py"],
                                         run_args=True, vitals=False))
    rule = next(ln for ln in g.splitlines() if ln.startswith("argpart ::="))
    assert rule == "argpart ::= [A-Za-z0-9_] [A-Za-z0-9_.,=+-]{0,29}"
    walker = Walker(g, seed=3, star_max=6)
    for _ in range(300):
        for line in walker.sample().splitlines():
            if line.startswith("$ run @ "):
                for word in line.split()[8:]:
                    assert all(p[:1] not in ("-", ".", "/", "") for p in word.split("/")), line
