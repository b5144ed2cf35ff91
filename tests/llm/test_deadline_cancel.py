"""`llm.deadline.guarded`: the deadline holds, and a cancel (Ctrl-C) always reaches the reader.

On Python 3.11 `asyncio.wait_for` ran each read in a task of its own, and a cancel landing as a
read completed could be swallowed: `duckflow run` went on after Ctrl-C (seen once in CI as a
20 s hang). The reads now run in the caller's task under `asyncio.timeout`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from duckflow.llm.deadline import guarded
from duckflow.llm.errors import LLMTimeoutError
from duckflow.llm.types import TextDelta


async def test_reads_run_in_the_callers_task() -> None:
    tasks: list[Any] = []

    async def events() -> AsyncIterator[Any]:
        for word in ("a", "b", "c"):
            tasks.append(asyncio.current_task())
            yield TextDelta(word)

    seen = [ev async for ev in guarded(events(), provider="t", deadline_s=30)]
    assert len(seen) == 3 and set(tasks) == {asyncio.current_task()}


async def test_a_cancel_during_a_read_stops_the_stream_and_closes_it() -> None:
    closed = asyncio.Event()
    reading = asyncio.Event()

    async def events() -> AsyncIterator[Any]:
        try:
            yield TextDelta("first")
            reading.set()
            await asyncio.sleep(30)
            yield TextDelta("never")
        finally:
            closed.set()

    got: list[Any] = []

    async def consume() -> None:
        async for ev in guarded(events(), provider="t", deadline_s=60):
            got.append(ev)

    task = asyncio.create_task(consume())
    await reading.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert closed.is_set() and len(got) == 1


async def test_the_deadline_still_ends_a_stream_that_never_finishes() -> None:
    async def events() -> AsyncIterator[Any]:
        yield TextDelta("keep-alive")
        await asyncio.sleep(30)
        yield TextDelta("never")

    with pytest.raises(LLMTimeoutError):
        async for _ in guarded(events(), provider="t", deadline_s=0.2):
            pass
