"""The pieces every turn passes through: the chunk mailbox, chunk timestamps, tracing switched off."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timezone

from duckflow.core import chunks as chunks_module
from duckflow.core.agent import Agent
from duckflow.core.chunks import delta, now_iso
from duckflow.core.run import ChunkMailbox, RunContext
from duckflow.core.session import Session
from duckflow.core.trace import NullTrace
from duckflow.llm.scripted import ScriptedModel, reply, tool_call

from .conftest import RecordingTrace, assert_seq_contiguous


async def test_the_mailbox_hands_over_chunks_in_order_then_none_after_close() -> None:
    box = ChunkMailbox()
    first, second = delta("a", "1"), delta("a", "2")
    box.put(first)
    box.put(second)
    box.close()
    assert [await box.get(), await box.get(), await box.get()] == [first, second, None]
    assert await box.get() is None


async def test_the_mailbox_wakes_a_waiting_consumer() -> None:
    box = ChunkMailbox()
    waiting = asyncio.create_task(box.get())
    await asyncio.sleep(0)
    assert not waiting.done()
    chunk = delta("a", "hi")
    box.put(chunk)
    assert await asyncio.wait_for(waiting, 1) is chunk
    closing = asyncio.create_task(box.get())
    await asyncio.sleep(0)
    box.close()
    assert await asyncio.wait_for(closing, 1) is None


async def test_a_cancelled_wait_does_not_lose_the_next_chunk() -> None:
    box = ChunkMailbox()
    waiting = asyncio.create_task(box.get())
    await asyncio.sleep(0)
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)
    chunk = delta("a", "kept")
    box.put(chunk)
    assert await box.get() is chunk


def test_now_iso_is_the_utc_time_in_milliseconds() -> None:
    before = datetime.now(timezone.utc).replace(microsecond=0)
    stamp = now_iso()
    after = datetime.now(timezone.utc)
    assert stamp.endswith("Z") and len(stamp) == len("2025-05-23T04:14:33.892Z")
    parsed = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    assert before <= parsed <= after


def test_now_iso_moves_on_with_the_clock(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    clock = [1_700_000_000_123_456_789]
    monkeypatch.setattr(chunks_module._time, "time_ns", lambda: clock[0])
    assert now_iso() == "2023-11-14T22:13:20.123Z"
    clock[0] += 500_000  # the same millisecond
    assert now_iso() == "2023-11-14T22:13:20.123Z"
    clock[0] += 1_000_000
    assert now_iso() == "2023-11-14T22:13:20.124Z"
    clock[0] += 86_400 * 10**9
    assert now_iso() == "2023-11-15T22:13:20.124Z"


def test_a_run_context_traces_unless_its_sink_records_nothing() -> None:
    agent = Agent("a", "x")
    recording = RecordingTrace()
    assert RunContext(Session(), agent, lambda c: None, recording).tracing
    silent = RunContext(Session(), agent, lambda c: None, NullTrace())
    assert not silent.tracing and not silent.child(agent).tracing
    RunContext(Session(), agent, lambda c: None, recording).trace_event("x", n=1)
    assert recording.names() == ["x"]


async def test_a_turn_with_a_recording_trace_still_records_every_event() -> None:
    trace = RecordingTrace()

    def add(a: int, b: int) -> int:
        return a + b

    agent = Agent("calc", "x", model=ScriptedModel([tool_call("add", a=2, b=3), reply("5")]),
                  tools=[add], trace=trace)
    started = time.time()
    result = await agent.run("2+3?")
    assert trace.names() == ["agent_start", "llm_call", "tool_start", "tool_end", "llm_call", "agent_end"]
    assert [c.type for c in result.chunks] == ["usage", "tool_call", "tool_response", "delta", "usage", "done"]
    assert_seq_contiguous(result.chunks)
    for c in result.chunks:
        stamped = datetime.fromisoformat(c.time.replace("Z", "+00:00")).timestamp()
        assert started - 0.002 <= stamped <= time.time()
