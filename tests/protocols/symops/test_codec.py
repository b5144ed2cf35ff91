"""SymOpsCodec: the same workspace tools work through Sym-Ops text."""

from __future__ import annotations

from pathlib import Path

from duckflow.llm.types import ToolCall, ToolResult, ToolSpec
from duckflow.protocols.codec import Codec
from duckflow.protocols.symops import SymOpsCodec, parse


def spec(name: str, *params: str) -> ToolSpec:
    return ToolSpec(name, f"{name} tool", {"type": "object", "properties": {p: {"type": "string"} for p in params}})


TOOLS = [spec("write_file", "path", "content"), spec("edit_file", "path", "content"),
         spec("delete_path", "path", "recursive"), spec("execute_shell", "command", "timeout"),
         spec("run_tests", "command", "timeout"), spec("search_code", "query", "limit"),
         spec("move_path", "src", "dst", "overwrite")]  # fmt: skip


def test_implements_the_codec_protocol_and_lists_other_tools_in_the_prompt() -> None:
    codec = SymOpsCodec()
    assert isinstance(codec, Codec) and codec.name == "symops" and codec.native is False
    prompt = codec.system_prompt(TOOLS)
    assert "$ search_code @ query" in prompt and "$ move_path @ src" in prompt
    assert "$ write_file" not in prompt  # the five built-in actions are described once


def test_canonical_actions_map_to_workspace_tools() -> None:
    text = ("~ plan\n$ write @ a.py\n--\nx = 1\n--\n$ edit @ b.py\n--\n<<<<<<< SEARCH\na\n=======\nb\n"
            ">>>>>>> REPLACE\n--\n$ rm @ old.py\n$ run @ ls -la\n$ test @ pytest -q tests/\n")  # fmt: skip
    d = SymOpsCodec().decode(text, TOOLS)
    assert [(c.name, c.arguments, c.executable, c.source) for c in d.calls] == [
        ("write_file", {"path": "a.py", "content": "x = 1\n"}, True, "symops"),
        ("edit_file", {"path": "b.py", "content": "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE"}, True, "symops"),
        ("delete_path", {"path": "old.py"}, True, "symops"),
        ("execute_shell", {"command": "ls -la"}, True, "symops"),
        ("run_tests", {"command": "pytest -q tests/"}, True, "symops"),
    ]
    assert d.text == "plan" and d.errors == []


def test_any_other_tool_by_name_with_json_block_or_dependency() -> None:
    text = '$ search_code @ def main\n--\n{"limit": 5}\n--\n$ move_path @ a.py > b.py\n'
    d = SymOpsCodec().decode(text, TOOLS)
    assert [(c.name, c.arguments) for c in d.calls] == [
        ("search_code", {"query": "def main", "limit": 5}),
        ("move_path", {"src": "a.py", "dst": "b.py"}),
    ]


def test_unknown_tool_is_an_error_naming_the_closest() -> None:
    d = SymOpsCodec().decode("$ serch_code @ x\n", TOOLS)
    assert d.calls[0].executable is False
    assert "did you mean 'search_code'" in d.errors[0]


def test_guessed_actions_become_non_executable_calls() -> None:
    d = SymOpsCodec(request="fix calc.py").decode("Here:\n```python\nx = 2\n```\n", TOOLS)
    assert [(c.name, c.arguments["path"], c.executable) for c in d.calls] == [("write_file", "calc.py", False)]
    assert d.errors and d.confidence < 0.6


def test_plain_prose_is_an_answer_not_an_error() -> None:
    d = SymOpsCodec().decode("The bug is on line 3.\n\nIt divides by zero.", TOOLS)
    assert d.calls == [] and d.errors == []
    assert d.text == "The bug is on line 3.\n\nIt divides by zero."


def test_encode_calls_round_trips_through_decode() -> None:
    calls = [ToolCall("write_file", {"path": "a.py", "content": "x = 1\n"}),
             ToolCall("execute_shell", {"command": "pytest -q"}),
             ToolCall("search_code", {"query": "load", "limit": 3})]  # fmt: skip
    codec = SymOpsCodec()
    text = codec.encode_calls(calls)
    assert parse(text).stage == "strict"
    back = codec.decode(text, TOOLS).calls
    assert [(c.name, c.arguments) for c in back] == [(c.name, c.arguments) for c in calls]


def test_encode_results_keeps_protocol_looking_output_inside_a_block() -> None:
    text = SymOpsCodec().encode_results([ToolResult("c1", "execute_shell", "--\n$ create @ x\n", is_error=True)])
    assert text.startswith("= execute_shell c1 error\n---\n--\n$ create @ x\n")


def test_a_custom_tool_of_the_agent_runs_even_if_the_parser_did_not_know_it() -> None:
    d = SymOpsCodec().decode("$ explain @ main.py\n$ read @ a.py\n", [spec("explain", "path"), spec("read_file", "path")])
    assert [(c.name, c.arguments, c.executable) for c in d.calls] == [
        ("explain", {"path": "main.py"}, True),
        ("read_file", {"path": "a.py"}, True),
    ]


def test_a_declared_tool_name_wins_over_a_verb_synonym() -> None:
    tools = [*TOOLS, spec("add", "a", "b")]
    d = SymOpsCodec().decode("$ add @ 1 > 2\n$ write @ w.py\n--\nx\n--\n", tools)
    assert [(c.name, c.arguments, c.executable) for c in d.calls] == [
        ("add", {"a": "1", "b": "2"}, True),
        ("write_file", {"path": "w.py", "content": "x\n"}, True),
    ]
    assert d.errors == []  # no "missing_content": `add` is not read as create here
    # without such a tool, `add` is still the synonym of create
    d = SymOpsCodec().decode("$ add @ a.py\n--\nx\n--\n", TOOLS)
    assert [(c.name, c.arguments) for c in d.calls] == [("write_file", {"path": "a.py", "content": "x\n"})]


def test_a_declared_tool_still_does_not_run_a_guess() -> None:
    d = SymOpsCodec().decode("$ add @ a.py\n--\nx = (", [spec("add", "path", "content")])
    assert [(c.name, c.executable) for c in d.calls] == [("add", False)]


def test_calls_validate_against_the_real_workspace_tools(tmp_path: Path) -> None:
    from duckflow.workspace.tools import workspace_tools

    tools = {t.name: t for t in workspace_tools(tmp_path)}
    text = ("$ create @ src/a.py\n--\nx = 1\n--\n"
            "$ edit @ src/a.py\n--\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n--\n"
            "$ delete @ old.py\n$ run @ ls -la\n$ run @ bash\n--\necho hi\nls\n--\n"
            "$ test @ tests/test_a.py\n$ test @ pytest -q tests/test_a.py\n$ test @ pytest\n$ test @ .\n"
            "$ move_path @ a.py > b.py\n")  # fmt: skip
    d = SymOpsCodec().decode(text, [t.spec for t in tools.values()])
    assert d.errors == []
    for call in d.calls:
        assert call.executable, call
        tools[call.name].args_model.model_validate(call.arguments)
    tests = [c.arguments for c in d.calls if c.name == "run_tests"]
    assert tests == [{"command": "python3 -m pytest -q tests/test_a.py"}, {"command": "pytest -q tests/test_a.py"},
                     {"command": "pytest"}, {}]  # fmt: skip
    # prompt, codec and docs agree: `$ test @ FILE.py` runs that test file, nothing is dropped
    assert [w for w in d.warnings if w.startswith("test_target_dropped")] == []
    web = SymOpsCodec().decode("$ test @ tests/web\n", [t.spec for t in tools.values()])
    assert [c.arguments for c in web.calls] == [{}] and web.warnings[0].startswith("test_target_dropped")
    assert [c.arguments for c in d.calls if c.name == "execute_shell"] == [
        {"command": "ls -la"}, {"command": "echo hi\nls"}]  # fmt: skip


def test_test_target_goes_to_a_target_parameter_when_the_tool_has_one() -> None:
    d = SymOpsCodec().decode("$ test @ tests/test_a.py\n", [spec("run_tests", "target")])
    assert d.calls[0].arguments == {"target": "tests/test_a.py"} and d.warnings == []
