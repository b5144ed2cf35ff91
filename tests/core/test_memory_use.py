"""Agents with short-term memory (bounded history) and a long-term store (recall)."""

from __future__ import annotations

from pathlib import Path

from duckflow.core.agent import Agent
from duckflow.core.memory import ShortTermMemory, SQLiteMemoryStore
from duckflow.core.recall import RECALL_HEADER
from duckflow.llm.scripted import ScriptedModel, reply, tool_call


def echo(text: str) -> str:
    return text


async def test_short_term_memory_bounds_history_and_starts_at_a_user_message() -> None:
    memory: ShortTermMemory[object] = ShortTermMemory(maxlen=5)
    model = ScriptedModel([tool_call("echo", text="a"), reply("one"),
                           tool_call("echo", text="b"), reply("two"),
                           reply("three")])
    agent = Agent("a", "sys", model=model, tools=[echo], memory=memory)
    for text in ("first", "second", "third"):
        assert (await agent.run(text, session="s")).ok
    last = model.requests[-1].messages
    assert last[0].content == "sys" and last[-1].content == "third"
    history = last[1:-1]
    assert 0 < len(history) <= 5 and history[0].role == "user" and history[0].content == "second"
    assert [m.role for m in history] == ["user", "assistant", "tool", "assistant"]
    assert len(memory.get("s")) == 5


async def test_long_term_store_recalls_what_fell_out_of_the_window(tmp_path: Path) -> None:
    store = SQLiteMemoryStore(tmp_path / "memory.db")
    model = ScriptedModel([reply("Noted: genmaicha."), reply("ok"), reply("You like genmaicha.")])
    agent = Agent("a", "sys", model=model, memory=ShortTermMemory(maxlen=2), memory_store=store)
    await agent.run("my favourite tea is genmaicha", session="u1")
    await agent.run("the weather is fine", session="u1")
    result = await agent.run("which tea do I like?", session="u1")
    system = model.requests[2].messages[0].content
    assert RECALL_HEADER in system and "genmaicha" in system
    assert all("genmaicha" not in m.content for m in model.requests[2].messages[1:])
    assert result.text == "You like genmaicha."
    other = ScriptedModel([reply("?")])
    await Agent("a", "sys", model=other, memory_store=store).run("which tea do I like?", session="u2")
    assert other.requests[0].messages[0].content == "sys"  # another session recalls nothing
    store.close()
