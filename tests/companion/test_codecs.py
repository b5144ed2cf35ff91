"""The Specialized reply decoded by a text codec (DML here; Sym-Ops when its codec is present)."""

from __future__ import annotations

from typing import Any

import pytest

from duckflow.companion.state import Step
from duckflow.llm.scripted import ScriptedModel, reply
from tests.helpers.companion import decision


async def test_dml_specialized_reply_reads_a_file_and_writes_behind_the_gate(env: Any) -> None:
    (env.root / "notes.md").write_text("quack\n", encoding="utf-8")
    model = ScriptedModel([
        decision("EXECUTION", "base_main_specialized", rationale="read then write"),
        reply("Thought: read the notes first.\n🦆▶️[T:read_file|notes.md]◀️🦆\n"
              "🦆▶️[T:write_file|out.txt|copied: quack]◀️🦆"),
    ], supports_tools=False)
    o = env.open(model, codec="dml")
    r = await o.session.handle_message("copy the notes")
    assert o.codec_name == "dml"
    # the tool instructions went into the Specialized prompt as text, not as native tools
    assert "🦆" in model.requests[1].messages[0].content and model.requests[1].tools == []
    assert [x.status for x in r.outcomes] == ["ok", "pending"]
    assert "quack" in r.outcomes[0].content
    assert o.session.state.step == Step.AWAITING_APPROVAL and not (env.root / "out.txt").exists()
    await o.session.answer_approval(True)
    assert (env.root / "out.txt").read_text() == "copied: quack"


async def test_symops_specialized_reply_when_the_codec_exists(env: Any) -> None:
    from duckflow.core.codecs import codec_by_name
    from duckflow.errors import DuckflowError

    try:
        codec_by_name("symops")
    except DuckflowError:
        pytest.skip("SymOpsCodec is not in this build yet")
    model = ScriptedModel([
        decision("EXECUTION", "base_main_specialized"),
        reply("~ write the greeting\n#c 0.3\n$ create @ hi.txt\n--\nhello\n--\n"),
    ], supports_tools=False)
    o = env.open(model, codec="symops")
    r = await o.session.handle_message("write hi.txt")
    assert [x.status for x in r.outcomes] == ["pending"]
    assert o.session.state.vitals.confidence == pytest.approx(0.3)


BROKEN = {"symops": "~ write it\n$ create @ hi.txt\n--\nhello\n",  # block never closed
          "dml": "🦆▶️[T:write_file|hi.txt]◀️🦆"}  # content missing  # fmt: skip
GOOD = {"symops": "~ write it\n$ create @ hi.txt\n--\nhello\n--\n", "dml": "🦆▶️[T:write_file|hi.txt|hello]◀️🦆"}


@pytest.mark.parametrize("codec", ["symops", "dml"])
async def test_a_malformed_specialized_reply_is_fixed_in_one_reask(env: Any, codec: str) -> None:
    model = ScriptedModel([decision("EXECUTION", "base_main_specialized"), reply(BROKEN[codec]),
                           reply(GOOD[codec])], supports_tools=False)  # fmt: skip
    o = env.open(model, codec=codec)
    r = await o.session.handle_message("write hi.txt")
    assert [x.status for x in r.outcomes] == ["pending"]  # the corrected write waits at the gate
    assert r.outcomes[0].call.arguments["path"] == "hi.txt"
    reask = model.requests[2].messages[-1].content
    assert "could not be used" in reask
    assert len(model.requests) == 3
    await o.session.answer_approval(True)
    assert (env.root / "hi.txt").read_text().rstrip("\n") == "hello"


@pytest.mark.parametrize("codec", ["symops", "dml"])
async def test_a_specialized_reply_not_fixed_in_two_reasks_runs_nothing(env: Any, codec: str) -> None:
    model = ScriptedModel([decision("EXECUTION", "base_main_specialized")] + [reply(BROKEN[codec])] * 3,
                          supports_tools=False)  # fmt: skip
    o = env.open(model, codec=codec)
    r = await o.session.handle_message("write hi.txt")
    assert r.outcomes == [] and not (env.root / "hi.txt").exists()
    assert len(model.requests) == 4  # Main, the Specialized reply and two re-asks
    told = [c.data.message for c in r.chunks if c.type == "notice"]  # type: ignore[union-attr]
    assert any("could not be read after 2 correction(s); nothing was run" in t for t in told)


async def test_dml_in_the_companion_has_aliases_state_values_and_japanese(env: Any) -> None:
    """Seed 002 in the live loop: file aliases (stable across turns), S values, the ja prompt."""
    from duckflow.config import Config

    (env.root / "notes.md").write_text("quack\n", encoding="utf-8")
    (env.root / "docs").mkdir()
    (env.root / "docs" / "notes.md").write_text("second\n", encoding="utf-8")
    cfg = Config()
    cfg.companion.language = "ja"
    model = ScriptedModel([
        decision("EXECUTION", "base_main_specialized", rationale="read then write"),
        reply("Thought: まずノートを読む。\nAction:\n🦆▶️[T:read_file|notes.md]◀️🦆\n"
              "🦆▶️[T:read_file|docs/notes.md]◀️🦆\n🦆▶️[T:write_file|out.txt|copied]◀️🦆"),
    ], supports_tools=False)
    o = env.open(model, codec="dml", config=cfg)
    await o.session.handle_message("copy the notes")
    await o.session.answer_approval(True)
    model.add(decision("EXECUTION", "base_main_specialized", rationale="read again"),
              reply("Action:\n🦆▶️[T:read_file|{{F:notes_2}}]◀️🦆\n🦆▶️[T:write_file|out2.txt|again]◀️🦆"))
    r = await o.session.handle_message("read the second notes again")
    system = model.requests[-1].messages[0].content
    assert "DMLコマンド詳細" in system  # the Japanese DML prompt under language=ja
    # aliases from the task's files: stem, then stem_2, the same in the later turn
    assert "🦆▶️[F:notes=notes.md]◀️🦆" in system and "🦆▶️[F:notes_2=docs/notes.md]◀️🦆" in system
    assert "cwd" in system and "last_error" in system and "task_plan" in system  # S values filled
    first = model.requests[1].messages[0].content
    assert "🦆▶️[F:" not in first or "notes_2=docs/notes.md" not in first  # learnt during turn 1
    assert r.outcomes[0].status == "ok" and "second" in r.outcomes[0].content  # {{F:notes_2}} expanded
