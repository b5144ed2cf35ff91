"""Tool calls of one turn: concurrent, bounded, isolated from each other's failures, exclusive."""

from __future__ import annotations

import asyncio
import threading

from duckflow.core.agent import Agent
from duckflow.core.tools import Tool, tool
from duckflow.llm.scripted import ScriptedModel, reply, tool_calls

from .conftest import assert_seq_contiguous


def responses(chunks: list) -> dict[str, tuple[str, bool]]:  # type: ignore[type-arg]
    return {c.data.id: (c.data.content, c.data.is_error) for c in chunks if c.type == "tool_response"}


async def test_calls_of_one_turn_really_run_at_the_same_time() -> None:
    a_started, b_started = asyncio.Event(), asyncio.Event()

    async def a() -> str:
        a_started.set()
        await asyncio.wait_for(b_started.wait(), 5)  # only returns if b runs meanwhile
        return "a done"

    async def b() -> str:
        b_started.set()
        await asyncio.wait_for(a_started.wait(), 5)
        return "b done"

    model = ScriptedModel([tool_calls([("a", {}), ("b", {})]), reply("both")])
    result = await Agent("p", "x", model=model, tools=[a, b]).run("go")
    assert responses(result.chunks) == {"call_1_1": ("a done", False), "call_1_2": ("b done", False)}


async def test_sync_tools_run_in_threads_concurrently() -> None:
    barrier = threading.Barrier(2, timeout=5)

    def left() -> str:
        barrier.wait()  # raises BrokenBarrierError unless `right` waits at the same time
        return "left"

    def right() -> str:
        barrier.wait()
        return "right"

    model = ScriptedModel([tool_calls([("left", {}), ("right", {})]), reply("ok")])
    result = await Agent("p", "x", model=model, tools=[left, right]).run("go")
    assert responses(result.chunks) == {"call_1_1": ("left", False), "call_1_2": ("right", False)}


async def test_one_failing_tool_does_not_cancel_the_others() -> None:
    boom_raised = asyncio.Event()

    async def boom() -> str:
        boom_raised.set()
        raise RuntimeError("disk on fire")

    async def steady() -> str:
        await asyncio.wait_for(boom_raised.wait(), 5)
        for _ in range(5):
            await asyncio.sleep(0)  # still running after the failure
        return "fine"

    model = ScriptedModel([tool_calls([("boom", {}), ("steady", {})]), reply("handled")])
    result = await Agent("p", "x", model=model, tools=[boom, steady]).run("go")
    got = responses(result.chunks)
    assert got["call_1_2"] == ("fine", False)
    assert got["call_1_1"][1] and "RuntimeError: disk on fire" in got["call_1_1"][0]
    assert result.text == "handled"
    tool_messages = [m for m in model.requests[1].messages if m.role == "tool"]
    assert [m.tool_call_id for m in tool_messages] == ["call_1_1", "call_1_2"]
    assert "disk on fire" in tool_messages[0].content


async def test_exclusive_tool_runs_alone() -> None:
    active: set[str] = set()
    log: list[str] = []
    seen_by_exclusive: list[set[str]] = []

    def worker(label: str) -> Tool:
        async def work() -> str:
            active.add(label)
            log.append(f"start {label}")
            for _ in range(5):
                await asyncio.sleep(0)
            active.discard(label)
            log.append(f"end {label}")
            return label
        return Tool.from_function(work, name=label)

    @tool(exclusive=True)
    async def migrate() -> str:
        """Changes everything; must not overlap with anything."""
        active.add("migrate")
        for _ in range(5):
            seen_by_exclusive.append(set(active))
            await asyncio.sleep(0)
        active.discard("migrate")
        return "migrated"

    calls = [("w1", {}), ("w2", {}), ("migrate", {}), ("w3", {}), ("w4", {})]
    model = ScriptedModel([tool_calls(calls), reply("ok")])
    tools = [worker("w1"), worker("w2"), migrate, worker("w3"), worker("w4")]
    result = await Agent("p", "x", model=model, tools=tools).run("go")
    assert all(s == {"migrate"} for s in seen_by_exclusive) and seen_by_exclusive
    assert log.index("end w1") < log.index("start w3") and log.index("end w2") < log.index("start w4")
    assert {"start w1", "start w2"} <= set(log[:2])  # w1 and w2 overlapped before migrate
    assert len(responses(result.chunks)) == 5


async def test_concurrency_is_bounded() -> None:
    active = 0
    peak = 0

    async def w() -> str:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        for _ in range(5):
            await asyncio.sleep(0)
        active -= 1
        return "ok"

    tools = [Tool.from_function(w, name=f"w{i}") for i in range(5)]
    model = ScriptedModel([tool_calls([(f"w{i}", {}) for i in range(5)]), reply("ok")])
    await Agent("p", "x", model=model, tools=tools, max_parallel_tools=2).run("go")
    assert peak == 2


async def test_seq_has_no_gaps_across_parallel_tools_and_handoffs() -> None:
    gate = asyncio.Event()

    async def slow() -> str:
        await asyncio.wait_for(gate.wait(), 5)
        return "slow"

    async def fast() -> str:
        gate.set()
        return "fast"

    def inner_tool(x: str) -> str:
        return x.upper()

    helper = Agent("helper", "Help.", model=ScriptedModel([
        tool_calls([("inner_tool", {"x": "a"}), ("inner_tool", {"x": "b"})]), reply("helped")]),
        tools=[inner_tool])
    model = ScriptedModel([
        tool_calls([("slow", {}), ("fast", {}), ("handoff_to_helper", {"input": "please"})]),
        reply("all done"),
    ])
    result = await Agent("boss", "Lead.", model=model, tools=[slow, fast], handoffs=[helper]).run("go")
    assert result.ok and result.text == "all done"
    assert_seq_contiguous(result.chunks)
    helper_types = [c.type for c in result.chunks if c.agent == "helper"]
    assert helper_types.count("tool_response") == 2 and helper_types[-1] == "done"
    assert responses(result.chunks)["call_1_3"] == ("helped", False)


async def test_a_tool_over_its_timeout_is_reported_and_the_others_finish() -> None:
    hang = asyncio.Event()

    @tool(timeout_s=0.05)
    async def stuck() -> str:
        await hang.wait()  # never set
        return "never"

    async def quick() -> str:
        return "quick"

    model = ScriptedModel([tool_calls([("stuck", {}), ("quick", {})]), reply("moved on")])
    result = await Agent("p", "x", model=model, tools=[stuck, quick]).run("go")
    got = responses(result.chunks)
    assert got["call_1_1"] == ("stuck timed out after 0.05 s", True)
    assert got["call_1_2"] == ("quick", False) and result.text == "moved on"
