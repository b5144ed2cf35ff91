"""Where sync tools run: a worker thread first, the loop's thread once proven fast, back for good when slow."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from typing import Any

import pytest

from duckflow.core import pacing
from duckflow.core.agent import Agent
from duckflow.core.pacing import INLINE_AFTER
from duckflow.core.tools import Tool, tool
from duckflow.errors import UserError
from duckflow.llm.scripted import ScriptedModel, reply, tool_call, tool_calls

from .conftest import assert_seq_contiguous

REQUEST = contextvars.ContextVar("request", default="none")
SLOW = 0.03  # seconds: over the limit below


@pytest.fixture(autouse=True)
def roomy_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 10 ms limit (1 ms in use): a busy CI machine that preempts a trivial function for a
    few ms must not make it look slow here."""
    monkeypatch.setattr(pacing, "INLINE_LIMIT_S", 0.01)


def where_tool(name: str = "where", *, delay: list[float] | None = None, **options: object) -> tuple[Tool, list[int]]:
    """A sync tool recording the thread of each call; `delay[0]` seconds of sleep when set."""
    seen: list[int] = []

    def fn() -> str:
        seen.append(threading.get_ident())
        if delay and delay[0]:
            time.sleep(delay[0])
        return "here"

    fn.__name__ = name
    return Tool.from_function(fn, **options), seen  # type: ignore[arg-type]


async def calls(t: Tool, n: int) -> None:
    for _ in range(n):
        assert await t.invoke({}) == "here"


async def test_a_fast_sync_tool_moves_to_the_loops_thread_after_three_threaded_calls() -> None:
    loop_thread = threading.get_ident()
    t, seen = where_tool()
    await calls(t, INLINE_AFTER + 3)
    assert all(ident != loop_thread for ident in seen[:INLINE_AFTER])
    assert seen[INLINE_AFTER:] == [loop_thread] * 3
    assert t.runs_inline


async def test_a_slow_sync_tool_never_runs_on_the_loops_thread() -> None:
    loop_thread = threading.get_ident()
    t, seen = where_tool(delay=[SLOW])
    await calls(t, INLINE_AFTER + 3)
    assert loop_thread not in seen and not t.runs_inline


async def test_a_tool_that_turns_slow_is_demoted_and_stays_demoted() -> None:
    loop_thread = threading.get_ident()
    delay = [0.0]
    t, seen = where_tool(delay=delay)
    await calls(t, INLINE_AFTER + 1)
    assert seen[-1] == loop_thread
    delay[0] = SLOW
    await calls(t, 1)  # runs inline once, takes over the limit: back to a thread
    assert seen[-1] == loop_thread and not t.runs_inline
    delay[0] = 0.0
    await calls(t, INLINE_AFTER + 3)  # fast again, but it stays in a thread
    assert loop_thread not in seen[-(INLINE_AFTER + 3):] and not t.runs_inline


async def test_a_slow_threaded_call_restarts_the_count() -> None:
    loop_thread = threading.get_ident()
    delay = [0.0]
    t, seen = where_tool(delay=delay)
    await calls(t, INLINE_AFTER - 1)
    delay[0] = SLOW
    await calls(t, 1)
    delay[0] = 0.0
    await calls(t, INLINE_AFTER - 1)
    assert loop_thread not in seen and not t.runs_inline
    await calls(t, 2)
    assert seen[-1] == loop_thread


async def test_blocking_true_always_uses_a_thread_and_false_never() -> None:
    loop_thread = threading.get_ident()
    threaded, seen_threaded = where_tool(blocking=True)
    inline, seen_inline = where_tool(blocking=False)
    await calls(threaded, INLINE_AFTER + 3)
    await calls(inline, 2)
    assert loop_thread not in seen_threaded
    assert seen_inline == [loop_thread, loop_thread]


async def test_blocking_false_keeps_a_slow_tool_on_the_loop_as_asked() -> None:
    loop_thread = threading.get_ident()
    t, seen = where_tool(blocking=False, delay=[SLOW])
    await calls(t, 2)
    assert seen == [loop_thread, loop_thread] and t.runs_inline


async def test_a_tool_with_a_timeout_always_uses_a_thread() -> None:
    loop_thread = threading.get_ident()
    t, seen = where_tool(timeout_s=5.0)
    await calls(t, INLINE_AFTER + 3)
    assert loop_thread not in seen


def test_blocking_false_with_a_timeout_is_refused_with_a_hint() -> None:
    with pytest.raises(UserError, match="a timeout needs the tool to run in a worker thread"):
        @tool(blocking=False, timeout_s=1.0)
        def quick() -> str:
            return "x"


async def test_context_variables_reach_the_tool_and_its_changes_do_not_leak() -> None:
    seen: list[tuple[str, int]] = []

    def stamp() -> str:
        seen.append((REQUEST.get(), threading.get_ident()))
        REQUEST.set("changed by the tool")
        return "ok"

    t = Tool.from_function(stamp)
    REQUEST.set("caller's")
    for _ in range(INLINE_AFTER + 2):
        assert await t.invoke({}) == "ok"
        assert REQUEST.get() == "caller's"
    assert [value for value, _ in seen] == ["caller's"] * (INLINE_AFTER + 2)
    assert seen[-1][1] == threading.get_ident()  # the last calls ran inline


async def test_exceptions_propagate_the_same_way_threaded_and_inline() -> None:
    loop_thread = threading.get_ident()
    fail = [False]
    seen: list[int] = []

    def flaky(n: int) -> int:
        seen.append(threading.get_ident())
        if fail[0]:
            raise ValueError(f"bad n {n}")
        return n

    t = Tool.from_function(flaky)
    fail[0] = True
    with pytest.raises(ValueError, match="bad n 1") as threaded:
        await t.invoke({"n": 1})
    fail[0] = False
    for n in range(INLINE_AFTER):
        assert await t.invoke({"n": n}) == n
    fail[0] = True
    with pytest.raises(ValueError, match="bad n 2") as inline:
        await t.invoke({"n": 2})
    assert seen[0] != loop_thread and seen[-1] == loop_thread
    assert type(threaded.value) is type(inline.value)
    assert t.runs_inline  # a fast failure is not a reason to leave the loop


def script(rounds: int, name: str, **arguments: object) -> ScriptedModel:
    steps = []
    for _ in range(rounds):
        steps += [tool_call(name, **arguments), reply("done")]
    return ScriptedModel(steps)


async def test_agent_run_and_stream_move_a_fast_sync_tool_inline_with_the_same_chunks() -> None:
    loop_thread = threading.get_ident()
    seen: list[int] = []

    def add(a: int, b: int) -> int:
        """Add two numbers."""
        seen.append(threading.get_ident())
        return a + b

    agent = Agent("calc", "x", model=script(6, "add", a=2, b=3), tools=[add])
    shapes = []
    for _ in range(3):
        result = await agent.run("2+3?")
        shapes.append([(c.type, c.seq) for c in result.chunks])
        assert result.text == "done"
    for _ in range(3):
        chunks = [c async for c in agent.stream("2+3?")]
        assert_seq_contiguous(chunks)
        shapes.append([(c.type, c.seq) for c in chunks])
        responses = [c.data for c in chunks if c.type == "tool_response"]
        assert [(r.content, r.is_error) for r in responses] == [("5", False)]
    assert all(ident != loop_thread for ident in seen[:INLINE_AFTER])
    assert seen[INLINE_AFTER:] == [loop_thread] * 3
    assert all(shape == shapes[0] for shape in shapes)  # inline or not, one stream shape


async def test_a_failing_inline_tool_reaches_the_model_as_before() -> None:
    fail = [False]

    def check(n: int) -> int:
        if fail[0]:
            raise RuntimeError("disk on fire")
        return n

    agent = Agent("p", "x", model=script(INLINE_AFTER + 1, "check", n=1), tools=[check])
    for _ in range(INLINE_AFTER):
        await agent.run("go")
    assert agent.tools[0].runs_inline
    fail[0] = True
    result = await agent.run("go")
    response = next(c.data for c in result.chunks if c.type == "tool_response")
    assert (response.content, response.is_error) == ("check failed: RuntimeError: disk on fire", True)


async def test_parallel_calls_of_an_inline_tool_all_answer_in_order() -> None:
    def double(n: int) -> int:
        return 2 * n

    t = Tool.from_function(double)
    for n in range(INLINE_AFTER):
        await t.invoke({"n": n})
    assert t.runs_inline
    model = ScriptedModel([tool_calls([("double", {"n": n}) for n in range(5)]), reply("ok")])
    result = await Agent("p", "x", model=model, tools=[t]).run("go")
    got = [c.data.content for c in result.chunks if c.type == "tool_response"]
    assert got == ["0", "2", "4", "6", "8"]


async def test_two_agents_with_a_slow_sync_tool_run_at_the_same_time() -> None:
    # each tool waits until the other is running: only possible if neither holds the loop
    barrier = threading.Barrier(2, timeout=5)
    ticks = 0

    def slow(label: str) -> str:
        barrier.wait()
        time.sleep(0.02)
        return label

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.002)

    agents = [Agent(f"a{i}", "x", model=script(1, "slow", label=f"a{i}"), tools=[slow]) for i in range(2)]
    tick = asyncio.create_task(ticker())
    try:
        results = await asyncio.gather(*(a.run("go") for a in agents))
    finally:
        tick.cancel()
    got = [next(c.data.content for c in r.chunks if c.type == "tool_response") for r in results]
    assert got == ["a0", "a1"]
    assert ticks >= 3  # the loop kept running while both tools slept


async def test_a_demoted_tool_no_longer_holds_the_loop() -> None:
    state: dict[str, Any] = {"delay": 0.0, "barrier": None}

    def job() -> str:
        if state["barrier"] is not None:
            state["barrier"].wait()  # returns only if a second call runs at the same time
        if state["delay"]:  # (sleep(0) yields the CPU: a wait, which keeps a tool in its thread)
            time.sleep(state["delay"])
        return "ok"

    t = Tool.from_function(job)
    await calls_of(t, INLINE_AFTER)
    assert t.runs_inline
    state["delay"] = SLOW
    assert await t.invoke({}) == "ok"  # the one inline call over the limit
    assert not t.runs_inline
    state["barrier"] = threading.Barrier(2, timeout=5)
    assert await asyncio.gather(t.invoke({}), t.invoke({})) == ["ok", "ok"]


async def calls_of(t: Tool, n: int) -> None:
    for _ in range(n):
        await t.invoke({})


async def test_a_tool_that_computes_past_the_limit_inline_is_demoted() -> None:
    spin = [0.0]

    def crunch() -> str:
        # its own CPU time, not the wall clock: on a busy machine a 30 ms wall-clock spin may get
        # under 10 ms of CPU, which the rule rightly reads as preemption, not the tool's cost
        until = time.thread_time() + spin[0]
        while time.thread_time() < until:  # CPU work, no blocking
            pass
        return "here"

    t = Tool.from_function(crunch)
    await calls_of(t, INLINE_AFTER)
    assert t.runs_inline
    spin[0] = SLOW
    assert await t.invoke({}) == "here"
    assert not t.runs_inline


def test_an_inline_call_slowed_only_by_preemption_keeps_its_place(monkeypatch: pytest.MonkeyPatch) -> None:
    """Over the limit, but with little CPU time of its own and no voluntary switch: the OS paused
    the thread (a busy machine), the tool did not block the loop; it stays inline."""
    usage = [(1.0, 7)]
    monkeypatch.setattr(pacing, "thread_usage", lambda: usage[0])

    def promoted() -> pacing.Pace:
        pace = pacing.Pace()
        for _ in range(INLINE_AFTER):
            pace.threaded(0.0001)
        assert pace.inline
        return pace

    preempted = promoted()
    usage[0] = (1.0 + 0.00002, 7)
    preempted.inline_call("t", 0.05, (1.0, 7))
    assert preempted.inline and not preempted.demoted

    blocked = promoted()
    usage[0] = (1.0 + 0.00002, 8)  # one voluntary switch: it waited on something
    blocked.inline_call("t", 0.05, (1.0, 7))
    assert blocked.demoted and not blocked.inline

    busy = promoted()
    usage[0] = (1.05, 7)  # its own CPU time was over the limit
    busy.inline_call("t", 0.05, (1.0, 7))
    assert busy.demoted

    unknown = promoted()  # where the OS cannot say (no RUSAGE_THREAD): the wall time decides
    unknown.inline_call("t", 0.05, None)
    assert unknown.demoted

    fast = promoted()
    fast.inline_call("t", 0.0001, (1.0, 7))
    assert fast.inline


def test_this_platform_reports_thread_usage() -> None:
    before = pacing.thread_usage()
    assert before is not None  # Linux: CI and this machine
    time.sleep(0.002)
    after = pacing.thread_usage()
    assert after is not None and after[1] > before[1]  # sleeping is a voluntary switch


async def test_an_inline_tool_sees_no_running_loop_as_in_a_thread() -> None:
    """A sync tool may start its own loop (asyncio.run) or find none, threaded or inline alike."""
    seen: list[tuple[bool, int, int]] = []

    async def fetch() -> int:
        return 42

    def bridge() -> int:
        try:
            asyncio.get_running_loop()
            found = True
        except RuntimeError:
            found = False
        seen.append((found, asyncio.run(fetch()), threading.get_ident()))
        return seen[-1][1]

    t = Tool.from_function(bridge, blocking=False)
    loop = asyncio.get_running_loop()
    assert await t.invoke({}) == 42
    assert seen == [(False, 42, threading.get_ident())]
    assert asyncio.get_running_loop() is loop  # restored after the call
    await asyncio.sleep(0)  # and the loop still runs


async def test_the_running_loop_is_restored_when_an_inline_tool_raises() -> None:
    def boom() -> None:
        raise KeyError("gone")

    t = Tool.from_function(boom, blocking=False)
    loop = asyncio.get_running_loop()
    with pytest.raises(KeyError):
        await t.invoke({})
    assert asyncio.get_running_loop() is loop


async def test_a_sync_tool_that_waits_on_the_loop_is_never_moved_onto_it() -> None:
    """A sync tool that hands a coroutine to the app's loop and waits for the answer returns in
    microseconds from a worker thread; on the loop's thread it would wait for ever. A threaded call
    in which the thread blocked never counts as fast, so it stays in a thread, through Agent.run."""
    loop = asyncio.get_running_loop()
    loop_thread = threading.get_ident()
    seen: list[int] = []

    async def lookup() -> str:
        return "42"

    def ask_the_loop() -> str:
        """Ask the app's loop for the answer."""
        seen.append(threading.get_ident())
        return asyncio.run_coroutine_threadsafe(lookup(), loop).result(timeout=5)

    t = Tool.from_function(ask_the_loop)
    model = ScriptedModel()
    for _ in range(INLINE_AFTER + 3):
        model.add(tool_call("ask_the_loop"), reply("42"))
    agent = Agent("a", "Answer.", model=model, tools=[t])
    for _ in range(INLINE_AFTER + 3):
        result = await asyncio.wait_for(agent.run("the answer?"), timeout=20)
        assert result.text == "42", result.error
    assert len(seen) == INLINE_AFTER + 3 and loop_thread not in seen
    assert not t.runs_inline


def test_a_threaded_call_that_blocked_does_not_count_as_fast() -> None:
    pace = pacing.Pace()
    for _ in range(INLINE_AFTER + 2):
        pace.threaded(0.00001, waited=True)
    assert not pace.inline
    for _ in range(INLINE_AFTER):
        pace.threaded(0.00001)
    assert pace.inline  # computing, not waiting: promoted as before


async def test_with_inline_sync_tools_turned_off_a_fast_tool_stays_in_its_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """`duckflow serve` (and DUCKFLOW_INLINE_SYNC_TOOLS=0) keeps every adaptive sync tool in a thread:
    the model chooses the arguments, and one slow call on the loop's thread would hold every session."""
    monkeypatch.setattr(pacing, "inline_allowed", False)
    loop_thread = threading.get_ident()
    t, seen = where_tool()
    await calls(t, INLINE_AFTER + 3)
    assert loop_thread not in seen and not t.runs_inline
    forced, forced_seen = where_tool("forced", blocking=False)
    await calls(forced, 2)
    assert forced_seen == [loop_thread] * 2  # an explicit blocking=False is still obeyed


def test_the_environment_turns_inline_sync_tools_off() -> None:
    import os
    import subprocess
    import sys

    code = "from duckflow.core import pacing; print(pacing.inline_allowed)"
    for value, expected in (("0", "False"), ("off", "False"), ("1", "True")):
        env = dict(os.environ, DUCKFLOW_INLINE_SYNC_TOOLS=value)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
        assert out.stdout.strip() == expected, out.stderr
