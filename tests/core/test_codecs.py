"""The same tools work with native tool calling and with text codecs (Sym-Ops, DML, a fake)."""

from __future__ import annotations

import importlib

import pytest

from duckflow.core.agent import Agent
from duckflow.core.codecs import codec_by_name, resolve_codec
from duckflow.core.native_codec import NativeCodec
from duckflow.errors import ConfigError
from duckflow.llm.scripted import ScriptedModel, reply, tool_call
from duckflow.llm.types import ToolCall, ToolResult
from duckflow.protocols.codec import Codec

from .conftest import LineCodec, assert_seq_contiguous

added: list[tuple[int, int]] = []

# Not named `add`: Sym-Ops reads `$ add @ x` as its verb "add a file" (= create), not as a tool.


def plus(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    added.append((a, b))
    return a + b


def _available(module: str, name: str) -> bool:
    try:
        getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return False
    return True


TEXT_CODECS = [
    pytest.param(LineCodec, id="fake-line"),
    pytest.param(lambda: codec_by_name("dml"), id="dml", marks=pytest.mark.skipif(
        not _available("duckflow.protocols.dml", "DMLCodec"), reason="DMLCodec not available")),
    pytest.param(lambda: codec_by_name("symops"), id="symops", marks=pytest.mark.skipif(
        not _available("duckflow.protocols.symops", "SymOpsCodec"), reason="SymOpsCodec not available")),
]


async def test_native_codec_sends_specs_and_runs_structured_calls() -> None:
    added.clear()
    model = ScriptedModel([tool_call("plus", a=2, b=3), reply("5")])
    result = await Agent("calc", "Add.", model=model, tools=[plus]).run("2+3?")
    assert result.text == "5" and added == [(2, 3)]
    assert [t.name for t in model.requests[0].tools] == ["plus"]
    assert model.requests[0].messages[0].content == "Add."  # nothing added to the prompt


@pytest.mark.parametrize("make_codec", TEXT_CODECS)
async def test_text_codecs_run_the_same_tool(make_codec: object) -> None:
    added.clear()
    codec: Codec = make_codec()  # type: ignore[operator]
    call_text = codec.encode_calls([ToolCall("plus", {"a": 2, "b": 3})])
    model = ScriptedModel([reply(call_text), reply("The sum is 5.")], supports_tools=False)
    agent = Agent("calc", "Add.", model=model, tools=[plus], codec=codec)
    result = await agent.run("2+3?")
    assert result.ok, result.error
    assert added == [(2, 3)] and result.text == "The sum is 5."
    first = model.requests[0]
    assert first.tools == []  # tools travel in the system prompt instead
    assert first.messages[0].content.startswith("Add.") and "plus" in first.messages[0].content
    assert codec.system_prompt([t.spec for t in agent.tools]).strip() in first.messages[0].content
    response = next(c for c in result.chunks if c.type == "tool_response")
    told = model.requests[1].messages[-1]
    assert told.role == "user"
    assert told.content == codec.encode_results([ToolResult(response.data.id, "plus", "5")])  # type: ignore[union-attr]
    assert_seq_contiguous(result.chunks)
    assert [c.type for c in result.chunks].count("tool_response") == 1


async def test_guessed_calls_are_proposed_not_run() -> None:
    added.clear()
    model = ScriptedModel([reply('GUESS plus {"a": 1, "b": 1}'), reply("I will not guess.")],
                          supports_tools=False)
    result = await Agent("calc", "Add.", model=model, tools=[plus], codec=LineCodec()).run("1+1?")
    assert added == []
    warnings = [c for c in result.chunks if c.type == "warning"]
    assert len(warnings) == 1 and warnings[0].data.code == "proposed_call"  # type: ignore[union-attr]
    assert warnings[0].data.details["tool"] == "plus"  # type: ignore[union-attr]
    assert not any(c.type == "tool_call" for c in result.chunks)
    assert "not run" in model.requests[1].messages[-1].content
    assert result.text == "I will not guess."


@pytest.mark.skipif(not _available("duckflow.protocols.dml", "DMLCodec"), reason="DMLCodec not available")
async def test_dml_macro_cut_off_is_not_run() -> None:
    added.clear()
    model = ScriptedModel([reply("Action:\n🦆▶️[T:plus|2|3"), reply("stopped")], supports_tools=False)
    result = await Agent("calc", "Add.", model=model, tools=[plus], codec="dml").run("2+3?")
    assert added == [] and any(c.type == "warning" for c in result.chunks)


async def test_unreadable_text_reply_is_asked_again() -> None:
    model = ScriptedModel([reply("CALL plus {not json"), reply("fine")], supports_tools=False)
    result = await Agent("calc", "Add.", model=model, tools=[plus], codec=LineCodec()).run("?")
    assert result.text == "fine"
    assert any(c.type == "warning" and c.data.code == "codec_error" for c in result.chunks)  # type: ignore[union-attr]
    assert "could not be used" in model.requests[1].messages[-1].content
    # the failed attempt is not kept: the second call's conversation is the first one's plus
    # only that attempt and the re-ask; the saved history holds the answer finally used
    assert [m.role for m in model.requests[1].messages][-2:] == ["assistant", "user"]


def test_codec_resolution() -> None:
    native_model = ScriptedModel([], supports_tools=True)
    text_model = ScriptedModel([], supports_tools=False)
    assert isinstance(resolve_codec(None, native_model), NativeCodec)
    with pytest.raises(ConfigError, match="no native tool calling"):
        resolve_codec("native", text_model)
    with pytest.raises(ConfigError, match="unknown codec"):
        codec_by_name("xml")
    line = LineCodec()
    assert resolve_codec(line, text_model) is line
    assert isinstance(NativeCodec(), Codec)


async def test_free_text_before_the_markup_streams_line_by_line() -> None:
    added.clear()
    text = 'Let me think.\nI will add them.\nCALL plus {"a": 1, "b": 2}\n'
    chunks = ["Let me ", "think.\nI will", " add them.\n", 'CALL plus {"a": 1,', ' "b": 2}\n']
    model = ScriptedModel([reply(text, chunks=chunks), reply("3")], supports_tools=False)
    agent = Agent("calc", "Add.", model=model, tools=[plus], codec=LineCodec())
    seen: list[tuple[str, str]] = []
    async for chunk in agent.stream("1+2?"):
        if chunk.type in ("delta", "tool_call"):
            seen.append((chunk.type, chunk.data.text if chunk.type == "delta" else chunk.data.name))  # type: ignore[union-attr]
    assert seen == [("delta", "Let me think.\n"), ("delta", "I will add them.\n"), ("tool_call", "plus"),
                    ("delta", "3")]
    assert added == [(1, 2)]


@pytest.mark.skipif(not _available("duckflow.protocols.dml", "DMLCodec"), reason="DMLCodec not available")
async def test_dml_thought_streams_before_the_action() -> None:
    text = "Thought: I need the sum.\nAction:\n🦆▶️[T:plus|4|5]◀️🦆"
    model = ScriptedModel([reply(text, chunks=[text[:25], text[25:40], text[40:]]), reply("9")],
                          supports_tools=False)
    result = await Agent("calc", "Add.", model=model, tools=[plus], codec="dml").run("4+5?")
    deltas = [c.data.text for c in result.chunks if c.type == "delta"]  # type: ignore[union-attr]
    assert deltas[0] == "Thought: I need the sum.\n"
    assert "".join(deltas[:-1]).strip() == "Thought: I need the sum.\nAction:" and deltas[-1] == "9"


@pytest.mark.skipif(not _available("duckflow.protocols.symops", "SymOpsCodec"),
                    reason="SymOpsCodec not available")
async def test_models_without_tool_calling_get_symops_by_default() -> None:
    added.clear()
    model = ScriptedModel([reply('$ plus @ 7\n--\n{"b": 8}\n--\n'), reply("15")], supports_tools=False)
    result = await Agent("calc", "Add.", model=model, tools=[plus]).run("7+8?")
    assert result.text == "15" and added == [(7, 8)]
    assert "$ plus @" in model.requests[0].messages[0].content


@pytest.mark.skipif(not _available("duckflow.protocols.symops", "SymOpsCodec"),
                    reason="SymOpsCodec not available")
async def test_symops_reply_is_read_once_while_it_streams() -> None:
    """Thoughts stream as their lines end; each action is reported when its block closes, before
    the reply is complete; the decoded reply comes from that same reading (no re-decoding)."""
    import duckflow.protocols.symops.codec as symops_codec

    added.clear()
    text = '~ adding\n$ plus @ 7\n--\n{"b": 8}\n--\n~ then done\n'
    pieces = [text[i : i + 3] for i in range(0, len(text), 3)]
    model = ScriptedModel([reply(text, chunks=pieces), reply("15")], supports_tools=False)
    calls: list[str] = []
    real = symops_codec.parse

    def counting(t: str, **kw: object) -> object:
        calls.append(t)
        return real(t, **kw)  # type: ignore[arg-type]

    symops_codec.parse = counting  # type: ignore[assignment]
    try:
        seen: list[tuple[str, str]] = []
        async for chunk in Agent("calc", "Add.", model=model, tools=[plus], codec="symops").stream("7+8?"):
            if chunk.type == "delta":
                seen.append(("delta", chunk.data.text))  # type: ignore[union-attr]
            elif chunk.type == "notice" and chunk.data.code == "action_read":  # type: ignore[union-attr]
                seen.append(("action", chunk.data.message))  # type: ignore[union-attr]
            elif chunk.type == "tool_call":
                seen.append(("tool_call", chunk.data.name))  # type: ignore[union-attr]
    finally:
        symops_codec.parse = real  # type: ignore[assignment]
    assert seen[:4] == [("delta", "adding\n"), ("action", "plus 7"), ("delta", "then done\n"), ("tool_call", "plus")]
    assert added == [(7, 8)] and calls == []  # the streaming reading was decoded, not a second parse


@pytest.mark.skipif(not _available("duckflow.protocols.symops", "SymOpsCodec"),
                    reason="SymOpsCodec not available")
async def test_the_live_symops_prompt_carries_the_few_shot_examples_and_they_mean_what_they_say(
        tmp_path: object) -> None:  # fmt: skip
    from duckflow.protocols.symops import SymOpsCodec
    from duckflow.protocols.symops.prompts import few_shot_examples
    from duckflow.workspace.tools import workspace_tools

    model = ScriptedModel([reply("~ nothing to do")], supports_tools=False)
    await Agent("calc", "Add.", model=model, tools=[plus], codec="symops").run("?")
    system = model.requests[0].messages[0].content
    examples = few_shot_examples()
    assert len(examples) >= 3 and all(e.assistant in system for e in examples)  # PromptBuilder's block
    specs = [t.spec for t in workspace_tools(str(tmp_path))]
    decoded = SymOpsCodec().decode(examples[0].assistant, specs)
    tests = [c.arguments for c in decoded.calls if c.name == "run_tests"]
    assert tests == [{"command": "python3 -m pytest -q test_config.py"}]  # `$ test @ FILE` runs that file
    assert not any(w.startswith("test_target_dropped") for w in decoded.warnings)
