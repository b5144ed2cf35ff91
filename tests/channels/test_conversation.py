"""The one front door from Python: `Conversation.open(workspace)` then `stream(text)` / `stream_answer(...)`.

Scenario tests with ScriptedModel: the companion asks before it writes and a yes finishes the
task; the Chat role (given its own model) answers, delegates to the Worker and words the result;
every chunk is a core Chunk numbered by the session's one seq."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from duckflow import Conversation
from duckflow.core.chunks import AnyChunk
from duckflow.llm.scripted import ScriptedModel, reply
from tests.orchestra.conftest import worker_json


async def _all(stream: Any) -> list[AnyChunk]:
    return [c async for c in stream]


async def test_the_companion_asks_then_a_yes_finishes_the_task(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("DUCKFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DUCKFLOW_CONFIG", "/dev/null")
    (tmp_path / "ws").mkdir()
    conv = Conversation.open(tmp_path / "ws", model_name="scripted:demo")
    try:
        asked = await _all(conv.stream("create hello.py"))
        assert asked[0].type == "notice" and asked[0].data.code == "route"
        assert asked[-1].type == "done" and asked[-1].data.ending == "approval"
        request = next(c for c in asked if c.type == "approval")
        assert not (tmp_path / "ws" / "hello.py").exists()
        done = await _all(conv.stream_answer(request.data.job_id, True, by="person:test"))
        assert done[-1].type == "done" and done[-1].data.ending == "done"
        assert (tmp_path / "ws" / "hello.py").exists()
        seqs = [c.seq for c in asked + done]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)  # one numbering for the session
        refused = await _all(conv.stream_answer("not-a-job", True, by="person:test"))
        assert [c.data.code for c in refused] == ["approval_refused"]  # nothing else is decided
    finally:
        conv.close()


async def test_the_chat_role_delegates_to_the_worker_and_writes_the_final_answer(tmp_path: Path,
                                                                                 monkeypatch: Any) -> None:
    monkeypatch.setenv("DUCKFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DUCKFLOW_CONFIG", "/dev/null")
    (tmp_path / "ws").mkdir()
    chat = ScriptedModel([reply("Let me get the Worker on it.\nDELEGATE: RESEARCH\nTASK: compare SQLite and PostgreSQL"),
                          reply("SQLite for one machine, PostgreSQL for several.")], name="chat")
    worker = ScriptedModel([reply(worker_json("SQLite: one file. PostgreSQL: a server."))], name="worker")
    conv = Conversation.open(tmp_path / "ws", model_name="scripted:demo", models={"chat": chat, "worker": worker})
    try:
        chunks = await _all(conv.stream("which database should we use?"))
        said = [(c.agent, c.type, getattr(c.data, "text", "") or getattr(c.data, "message", "")) for c in chunks]
        assert ("chat", "reply", "Let me get the Worker on it.") in said
        assert ("chat", "notice", "Chat handed this to Worker: compare SQLite and PostgreSQL") in said
        assert said[-2] == ("worker", "reply", "SQLite for one machine, PostgreSQL for several.")
        assert chunks[-1].data.ending == "done"
        assert "compare SQLite and PostgreSQL" in str(worker.requests[0])
        assert "SQLite: one file" in str(chat.requests[1])  # the Chat model saw the Worker's result
        assert conv.session.state.exchanges[-1].user == "which database should we use?"
    finally:
        conv.close()


async def test_a_failure_while_routing_is_one_line_and_the_conversation_goes_on(tmp_path: Path,
                                                                               monkeypatch: Any) -> None:
    monkeypatch.setenv("DUCKFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DUCKFLOW_CONFIG", "/dev/null")
    (tmp_path / "ws").mkdir()
    conv = Conversation.open(tmp_path / "ws", model_name="scripted:demo")
    real = conv.orch.handle

    async def broken(*args: Any, **kw: Any) -> Any:
        raise RuntimeError("the classifier's socket closed")

    try:
        conv.orch.handle = broken  # type: ignore[method-assign]
        failed = await _all(conv.stream("hello"))
        assert [c.type for c in failed] == ["error", "done"] and failed[-1].data.ending == "error"
        assert "the classifier's socket closed" in failed[0].data.message
        conv.orch.handle = real  # type: ignore[method-assign]
        again = await _all(conv.stream("create hello.py"))
        assert again[-1].data.ending == "approval"  # the same conversation goes on
    finally:
        conv.close()
