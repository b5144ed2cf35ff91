"""DML: macros in prose, tolerant delimiters, signature-aware arguments, aliases, codec."""

from __future__ import annotations

from duckflow.llm.types import ToolCall, ToolResult, ToolSpec
from duckflow.protocols.codec import Codec
from duckflow.protocols.dml import (
    DEFAULT_TOOLS,
    AliasTable,
    DMLCodec,
    instruction_text,
    instructions,
    parse,
    state_variables,
    system_prompt,
)

TOOLS = list(DEFAULT_TOOLS)


def test_seed_example_reply() -> None:
    text = (
        "Thought: ユーザーは`main.py`の編集を望んでいる。これは`🦆▶️[I:verify_before_edit]◀️🦆`"
        "の指示にも合致する。\nAction:\n🦆▶️[T:read_file|{{F:main}}]◀️🦆\n"
    )
    r = parse(text, TOOLS, AliasTable(["src/main.py"]))
    assert r.ok
    assert [(m.command, m.name) for m in r.macros] == [("I", "verify_before_edit"), ("T", "read_file")]
    assert r.tool_macros[0].arguments == {"path": "src/main.py"}
    assert r.thought is not None and r.thought.startswith("ユーザーは") and "verify_before_edit" in r.thought
    d = r.to_dict()
    assert set(d) == {"ok", "text", "thought", "macros", "errors"}
    m = d["macros"][1]
    assert text[m["start"] : m["end"]] == m["raw"] == "🦆▶️[T:read_file|{{F:main}}]◀️🦆"
    assert m["args"] == ["{{F:main}}"]
    assert "🦆▶️[T:" not in d["text"]


def test_last_argument_takes_the_rest_with_pipes() -> None:
    text = "🦆▶️[T:write_file|a.sh|echo hi | grep h || true]◀️🦆"
    m = parse(text, TOOLS).macros[0]
    assert m.args == ["a.sh", "echo hi | grep h || true"]
    assert m.arguments == {"path": "a.sh", "content": "echo hi | grep h || true"}


def test_without_tool_list_the_standard_tools_apply() -> None:
    m = parse("🦆▶️[T:execute_shell|ls | wc -l]◀️🦆").macros[0]
    assert m.args == ["ls | wc -l"]
    other = parse("🦆▶️[T:raed_file|a|b|c]◀️🦆")
    assert other.macros[0].args == ["a", "b", "c"]
    assert other.errors == ["macro `T:raed_file` at offset 0: unknown tool `raed_file`; did you mean `read_file`?"]


def test_tolerates_missing_variation_selector_and_spaces() -> None:
    text = "ok 🦆▶[T : list_files | src | *.py | true]◀🦆 done"
    r = parse(text, TOOLS)
    assert r.ok
    m = r.macros[0]
    assert m.name == "list_files" and m.args == ["src", "*.py", "true"]
    assert m.arguments == {"path": "src", "pattern": "*.py", "recursive": True}
    assert r.text == "ok  done"


def test_multiline_content_keeps_indentation() -> None:
    text = "Action:\n🦆▶️[T:write_file|src/a.py|\ndef f():\n    return 1\n]◀️🦆\n"
    m = parse(text, TOOLS).macros[0]
    assert m.args[1] == "def f():\n    return 1\n"


def test_open_macro_at_end_is_reported_not_kept() -> None:
    text = "🦆▶️[T:read_file|a.py]◀️🦆\n🦆▶️[T:write_file|b.py|print('x')"
    r = parse(text, TOOLS)
    assert not r.ok and len(r.macros) == 1
    assert "not closed" in r.errors[0] and "write_file" in r.errors[0]
    assert r.open_macro is not None and r.open_macro.complete is False


def test_macro_interrupted_by_another_open() -> None:
    r = parse("🦆▶️[T:read_file|a.py 🦆▶️[T:read_file|b.py]◀️🦆", TOOLS)
    assert [m.args for m in r.macros] == [["b.py"]]
    assert any("not closed" in e for e in r.errors)


def test_unknown_tool_suggests_closest() -> None:
    r = parse("🦆▶️[T:raed_file|a.py]◀️🦆", TOOLS)
    assert r.errors == ["macro `T:raed_file` at offset 0: unknown tool `raed_file`; did you mean `read_file`?"]


def test_wrong_arity_names_usage() -> None:
    r = parse("🦆▶️[T:write_file|a.py]◀️🦆", TOOLS)
    assert len(r.errors) == 1 and "needs 2 argument(s) (path|content)" in r.errors[0]
    assert "missing content" in r.errors[0]
    ping = ToolSpec("ping", "No arguments.")
    r = parse("🦆▶️[T:ping|now]◀️🦆", [ping])
    assert "takes no arguments" in r.errors[0]
    assert parse("🦆▶️[T:ping]◀️🦆", [ping]).ok
    assert parse("🦆▶️[T:run_tests]◀️🦆", TOOLS).ok


def test_bad_boolean_is_an_error() -> None:
    r = parse("🦆▶️[T:delete_path|build|maybe]◀️🦆", TOOLS)
    assert "recursive" in r.errors[0] and "true or false" in r.errors[0]


def test_pipe_in_command_with_typed_optional_after_it() -> None:
    m = parse("🦆▶️[T:execute_shell|ls | wc -l]◀️🦆", TOOLS).macros[0]
    assert m.arguments == {"command": "ls | wc -l"}
    m = parse("🦆▶️[T:execute_shell|make test|30]◀️🦆", TOOLS).macros[0]
    assert m.arguments == {"command": "make test", "timeout": 30.0}


def test_unknown_alias_suggests_closest() -> None:
    r = parse("🦆▶️[T:read_file|{{F:mian}}]◀️🦆", TOOLS, AliasTable(["src/main.py"]))
    assert "unknown file alias `mian`; did you mean `main`?" in r.errors[0]


def test_unknown_command_state_and_instruction() -> None:
    r = parse("🦆▶️[X:foo]◀️🦆 🦆▶️[S:cdw]◀️🦆 🦆▶️[I:no_guess]◀️🦆 🦆▶️[S:os]◀️🦆")
    assert len(r.errors) == 3
    assert "unknown DML command `X`" in r.errors[0]
    assert "did you mean `cwd`" in r.errors[1]
    assert "did you mean `no_guesswork`" in r.errors[2]


def test_japanese_prose_and_fullwidth_colon() -> None:
    text = "まずファイルを読みます。🦆▶️[T：read_file｜{{F:main}}]◀️🦆 と 🦆▶️[T:search_code|データベース接続]◀️🦆 を実行。"
    r = parse(text, TOOLS)
    assert r.ok, r.errors
    names = [m.name for m in r.macros]
    assert names[0] == "read_file" and names[1] == "search_code" and r.macros[1].args == ["データベース接続"]
    assert r.macros[1].start == text.index("🦆▶️[T:search")
    assert r.text.startswith("まずファイルを読みます。") and r.text.endswith("を実行。")


def test_alias_collisions_and_stability() -> None:
    t = AliasTable(["src/api/user.py", "src/db/user.py", "src/main.py", "lib/user.ts", "./.env"])
    assert t.items() == [
        ("user", "src/api/user.py"),
        ("user_2", "src/db/user.py"),
        ("main", "src/main.py"),
        ("user_3", "lib/user.ts"),
        ("env", ".env"),
    ]
    assert t.add("src/db/user.py") == "user_2"  # stable across turns
    again = AliasTable.from_dict(t.to_dict())
    assert again.add("src/new/user.py") == "user_4" and again.alias("src/main.py") == "main"
    assert t.render().splitlines()[1] == "🦆▶️[F:user_2=src/db/user.py]◀️🦆"
    assert t.expand("cat {{F:user_2}} {{ F:main }}") == "cat src/db/user.py src/main.py"


def test_f_definition_parsed() -> None:
    m = parse("🦆▶️[F:main=src/main.py]◀️🦆").macros[0]
    assert (m.command, m.name, m.args) == ("F", "main", ["src/main.py"])


def test_library_has_both_languages() -> None:
    assert set(state_variables()) == {"cwd", "last_error", "os", "task_plan"}
    assert set(instructions()) == {
        "respect_style", "no_guesswork", "security_check", "think_step_by_step", "verify_before_edit",
    }
    assert "推測" in instruction_text("no_guesswork", "ja")
    assert "guess" in instruction_text("no_guesswork", "en")


def test_system_prompt_languages_and_tools() -> None:
    spec = ToolSpec("grep", "Search text.", {"type": "object", "properties": {"pattern": {}, "path": {}}, "required": ["pattern"]})
    en = system_prompt([spec], "en", aliases=AliasTable(["src/main.py"]), state={"cwd": "/w"})
    assert "🦆▶️[T:grep|pattern|path?]◀️🦆" in en and "🦆▶️[F:main=src/main.py]◀️🦆" in en
    assert "🦆▶️[S:cwd]◀️🦆" in en and "Thought:" in en
    ja = system_prompt(language="ja")
    assert "行動サイクル" in ja and "🦆▶️[T:read_file|path|start_line?|end_line?]◀️🦆" in ja and "推測" in ja


def test_codec_decode_executable_only_when_valid() -> None:
    codec = DMLCodec(AliasTable(["src/main.py"]))
    assert isinstance(codec, Codec)
    reply = (
        "Thought: read then fix.\nAction:\n🦆▶️[T:read_file|{{F:main}}]◀️🦆\n"
        "🦆▶️[T:write_file|{{F:main}}]◀️🦆\n🦆▶️[T:nope|x]◀️🦆\n🦆▶️[T:execute_shell|rm -rf bu"
    )
    d = codec.decode(reply, TOOLS)
    assert [(c.name, c.executable) for c in d.calls] == [
        ("read_file", True), ("write_file", False), ("execute_shell", False),
    ]
    assert d.calls[0].arguments == {"path": "src/main.py"} and d.calls[0].source == "dml"
    assert len({c.id for c in d.calls}) == 3
    assert len(d.errors) == 3 and d.confidence < 1


def test_codec_encode_round_trip() -> None:
    codec = DMLCodec(AliasTable(["src/main.py"]))
    calls = [
        ToolCall("write_file", {"path": "src/main.py", "content": "a | b\nc\n"}),
        ToolCall("list_files", {"path": "src", "pattern": "*.py", "recursive": False}),
    ]
    text = codec.encode_calls(calls)
    assert "{{F:main}}" in text
    back = codec.decode(text, TOOLS)
    assert [c.arguments for c in back.calls] == [c.arguments for c in calls]
    out = codec.encode_results([ToolResult("dml_0", "read_file", "x = 1", False)])
    assert "Observation (read_file, ok)" in out and "x = 1" in out


def test_codec_unknown_instruction_is_a_warning_not_a_reask() -> None:
    codec = DMLCodec()
    d = codec.decode("Thought: 🦆▶️[I:be_careful]◀️🦆 read.\n🦆▶️[T:read_file|a.py]◀️🦆", TOOLS)
    assert d.errors == [] and d.confidence == 1.0
    assert d.executable_calls[0].arguments == {"path": "a.py"}
    assert any("be_careful" in w for w in d.warnings)


def test_named_arguments_and_quoted_paths_are_undone() -> None:
    m = parse('🦆▶️[T:write_file|path="src/a.py"|content=x = 1]◀️🦆', TOOLS).macros[0]
    assert m.arguments == {"path": "src/a.py", "content": "x = 1"}
    m = parse("🦆▶️[T:list_files|path: `src`|pattern=*.py|recursive=true]◀️🦆", TOOLS).macros[0]
    assert m.arguments == {"path": "src", "pattern": "*.py", "recursive": True}
    # content that merely starts like an assignment of another name is left alone
    m = parse("🦆▶️[T:write_file|a.py|path = 'x'\n]◀️🦆", TOOLS).macros[0]
    assert m.arguments == {"path": "a.py", "content": "path = 'x'"}


def test_single_line_content_on_its_own_line_keeps_newline() -> None:
    m = parse("🦆▶️[T:write_file|notes.txt|\nhello\n]◀️🦆", TOOLS).macros[0]
    assert m.arguments == {"path": "notes.txt", "content": "hello\n"}
    m = parse("🦆▶️[T:read_file|\nsrc/a.py\n]◀️🦆", TOOLS).macros[0]
    assert m.arguments == {"path": "src/a.py"}
    m = parse("🦆▶️[T:search_code|db connect\n]◀️🦆", TOOLS).macros[0]
    assert m.arguments == {"query": "db connect"}


def test_json_object_arguments_are_read_by_name() -> None:
    r = parse('🦆▶️[T:write_file|{"path": "{{F:main}}", "content": "a | b"}]◀️🦆', TOOLS, AliasTable(["src/main.py"]))
    assert r.ok and r.macros[0].arguments == {"path": "src/main.py", "content": "a | b"}
    # a JSON object that is real content stays content
    r = parse('🦆▶️[T:write_file|data.json|{"path": 1}]◀️🦆', TOOLS)
    assert r.macros[0].arguments == {"path": "data.json", "content": '{"path": 1}'}


def test_tool_macro_named_in_thought_is_not_run_twice() -> None:
    codec = DMLCodec()
    reply = (
        "Thought: I will run 🦆▶️[T:execute_shell|git commit -m x]◀️🦆 and maybe 🦆▶️[T:run_tests]◀️🦆.\n"
        "Action:\n🦆▶️[T:execute_shell|git commit -m x]◀️🦆\n"
    )
    r = parse(reply, TOOLS)
    assert r.thought is not None and r.thought.startswith("I will run")
    assert [m.in_thought for m in r.tool_macros] == [True, True, False]
    d = codec.decode(reply, TOOLS)
    assert [(c.name, c.executable) for c in d.calls] == [("run_tests", False), ("execute_shell", True)]
    assert any("only in the Thought" in w for w in d.warnings)


def test_without_action_label_macros_after_thought_run() -> None:
    r = parse("Thought: read it.\n🦆▶️[T:read_file|a.py]◀️🦆", TOOLS)
    assert r.thought == "read it." and not r.tool_macros[0].in_thought


def test_macros_in_reasoning_blocks_are_ignored() -> None:
    text = "<think>maybe 🦆▶️[T:execute_shell|rm -rf build]◀️🦆? no.</think>\n🦆▶️[T:read_file|a.py]◀️🦆"
    r = parse(text, TOOLS)
    assert r.ok and [m.name for m in r.macros] == ["read_file"]
    assert r.macros[0].start == text.index("🦆▶️[T:read_file")
    assert "reasoning" in r.warnings[0]
    d = DMLCodec().decode(text, TOOLS)
    assert [c.name for c in d.calls] == ["read_file"] and d.warnings
    lone = parse("draft 🦆▶️[T:read_file|b.py]◀️🦆</think>🦆▶️[T:read_file|a.py]◀️🦆", TOOLS)
    assert [m.args for m in lone.macros] == [["a.py"]]


def _workspace_specs(tmp_path: object) -> list[ToolSpec]:
    from duckflow.workspace.tools import workspace_tools

    return [t.spec for t in workspace_tools(str(tmp_path))]


def test_split_by_the_real_workspace_schemas(tmp_path: object) -> None:
    """The workspace tools' own specs (anyOf/Optional numbers), not hand-written ones (issue 9)."""
    specs = _workspace_specs(tmp_path)
    codec = DMLCodec()

    def call(macro: str) -> tuple[dict[str, object], bool]:
        (c,) = codec.decode(f"🦆▶️[T:{macro}]◀️🦆", specs).calls
        return c.arguments, c.executable

    assert call("execute_shell|cat a.txt | wc -l") == ({"command": "cat a.txt | wc -l"}, True)
    assert call("execute_shell|cat a | wc -l|30") == ({"command": "cat a | wc -l", "timeout": 30}, True)
    assert call("read_file|a.py|3|9") == ({"path": "a.py", "start_line": 3, "end_line": 9}, True)
    assert call("search_code|a | b|5") == ({"query": "a | b", "limit": 5}, True)
    assert call("write_file|a.py|x | y") == ({"path": "a.py", "content": "x | y"}, True)
    assert call("run_tests|pytest -q tests/x.py") == ({"command": "pytest -q tests/x.py"}, True)
    assert call("list_files|src|*.py|true") == ({"path": "src", "pattern": "*.py", "recursive": True}, True)
    args, ok = call("read_file|a.py|three")
    assert not ok  # an integer parameter cannot take a word: an error, nothing runs


def test_schema_types_reads_optional_and_type_lists() -> None:
    from duckflow.protocols.dml.arguments import convert, schema_types

    assert schema_types({"anyOf": [{"type": "number"}, {"type": "null"}]}) == ["number", "null"]
    assert schema_types({"type": ["integer", "null"]}) == ["integer", "null"]
    assert schema_types({}) == ["string"]
    assert convert("7", {"anyOf": [{"type": "integer"}, {"type": "null"}]}) == 7
    assert convert("none", {"anyOf": [{"type": "integer"}, {"type": "null"}]}) is None
    try:
        convert("wc -l", {"anyOf": [{"type": "number"}, {"type": "null"}]})
    except ValueError as err:
        assert "number" in str(err)
    else:
        raise AssertionError("a number parameter took `wc -l`")
