"""Session stores: anonymous runs keep nothing, named sessions are kept per agent, bounded by bytes."""

from __future__ import annotations

from duckflow.core.agent import Agent
from duckflow.core.session import MemorySessions, Session, SessionStore
from duckflow.llm.scripted import ScriptedModel, reply
from duckflow.llm.types import Message


async def test_a_run_without_session_is_not_kept_and_a_named_one_is() -> None:
    agent = Agent("a", "x", model=ScriptedModel([reply("one"), reply("two"), reply("three")]))
    first = await agent.run("hi")
    assert len(agent.sessions) == 0 and first.session.id not in agent.sessions  # died with its run
    await agent.run("hello", session="alice")
    third = await agent.run("again", session="alice")
    assert len(agent.sessions) == 1 and [m.content for m in third.session.history] == [
        "hello", "two", "again", "three"]


async def test_each_agent_owns_its_store_unless_given_one_to_share() -> None:
    shared = MemorySessions()
    a = Agent("a", "x", model=ScriptedModel([reply("from a")]), sessions=shared)
    b = Agent("b", "x", model=ScriptedModel([reply("from b")]), sessions=shared)
    loner = Agent("c", "x", model=ScriptedModel([reply("from c")]))
    await a.run("one", session="s")
    second = await b.run("two", session="s")
    assert second.chunks[0].seq > 1 and len(second.session.history) == 4  # one conversation
    assert (await loner.run("three", session="s")).chunks[0].seq == 1 and isinstance(shared, SessionStore)


def _session(sid: str, chars: int) -> Session:
    return Session(id=sid, history=[Message("user", "u" * chars), Message("assistant", "a")])


def test_named_sessions_are_bounded_by_bytes_and_count_least_recent_first() -> None:
    store = MemorySessions(max_sessions=3, max_bytes=10_000)
    for sid in ("s1", "s2", "s3"):
        store.save(_session(sid, 3_000))
    assert len(store) == 3 and store.bytes <= 10_000
    store.load("s1")  # s1 is now the most recent
    store.save(_session("s4", 3_000))  # over 10 kB: the least recently used (s2) goes
    assert "s2" not in store and {"s1", "s3", "s4"} == {s for s in ("s1", "s2", "s3", "s4") if s in store}
    store.save(_session("huge", 20_000))  # larger than the whole budget: not kept at all
    assert "huge" not in store and store.bytes <= 10_000
    store.save(_session("s5", 10))
    store.save(_session("s6", 10))
    assert len(store) == 3  # and by count
    assert store.forget("s6") and not store.forget("s6") and store.load("gone").history == []
