"""The DML grammar (protocols.grammar.dml_grammar) against the one DML reader: every string the
grammar allows — walked at random over adversarial characters — decodes strictly with DMLCodec."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from duckflow.config import WorkspaceConfig
from duckflow.protocols.dml import AliasTable, DMLCodec
from duckflow.protocols.grammar import DML_OPEN, DmlGrammarSpec, dml_grammar
from duckflow.workspace.tools import workspace_tools
from tests.helpers.gbnf_walk import Walker


@pytest.fixture(scope="module")
def specs() -> list:
    return [t.spec for t in workspace_tools(Path("/tmp"), WorkspaceConfig())]


def _strict(text: str, codec: DMLCodec, specs: list) -> list:
    decoded = codec.decode(text, specs)
    assert not decoded.errors and not decoded.warnings, (text, decoded.errors, decoded.warnings)
    assert all(c.executable for c in decoded.calls), text
    assert len(decoded.calls) == text.count(DML_OPEN), text
    return decoded.calls


@pytest.mark.parametrize("seed", range(6))
def test_every_reply_the_grammar_allows_decodes_strictly(specs: list, seed: int) -> None:
    table = AliasTable(["src/app.py", "notes.txt"])
    spec = DmlGrammarSpec(tools=specs, create_paths=["hello.py", "src/app.py"], existing=["src/app.py", "notes.txt"],
                          commands=["python3 hello.py", "python3 -m pytest -q"], aliases=table.items(),
                          max_block_lines=6, thought_chars=40, min_actions=0, max_actions=4)
    walker = Walker(dml_grammar(spec), seed=seed, star_max=12)
    seen: set[str] = set()
    for _ in range(150):
        text = walker.sample()
        calls = _strict(text, DMLCodec(table), specs)
        assert text.rstrip().splitlines()[-1] in ("Next: DONE", "Next: CONTINUE")
        for c in calls:
            seen.add(c.name)
            if c.name == "execute_shell":
                assert c.arguments == {"command": c.arguments["command"]}
                # a listed command, or a new script of a plain name (new names are allowed here)
                assert c.arguments["command"] in spec.commands or re.fullmatch(
                    r"python3 [a-z_][a-z0-9_]*(/[a-z_][a-z0-9_]*)?\.py", c.arguments["command"])
            path = c.arguments.get("path")
            if path is not None and c.name != "write_file" and c.name != "create_directory":
                assert path in ("src/app.py", "notes.txt")  # aliases come back as their paths
    assert {"write_file", "execute_shell", "delete_path", "search_code"} <= seen


def test_only_the_given_tools_paths_and_commands(specs: list) -> None:
    chosen = [s for s in specs if s.name in ("write_file", "execute_shell", "edit_file")]
    g = dml_grammar(DmlGrammarSpec(tools=chosen, create_paths=["hello.py"], commands=["python3 hello.py"],
                                   new_names=False))
    assert '"🦆▶️[T:write_file" "|" ( ( "hello.py" ) ) "|" dblock' in g
    assert '"🦆▶️[T:execute_shell" "|" ( "python3 hello.py" )' in g
    assert "edit_file" not in g  # nothing exists to edit
    assert "newname" not in g and "delete_path" not in g
    with pytest.raises(ValueError):
        dml_grammar(DmlGrammarSpec(tools=[s for s in specs if s.name == "delete_path"]))


def test_content_that_starts_with_the_parameter_name_is_kept(specs: list) -> None:
    reply = "Thought: t\nAction:\n🦆▶️[T:write_file|a.py|\ncontent = 1\nprint(content)\n]◀️🦆\nNext: DONE\n"
    (call,) = _strict(reply, DMLCodec(), specs)
    assert call.arguments == {"path": "a.py", "content": "content = 1\nprint(content)\n"}
