"""Runs the tool calls of one model turn: concurrently, bounded, isolated, exclusive ones alone.

Calls run in an `asyncio.TaskGroup` under a semaphore. A failing tool does not cancel the
others: its error becomes a `ToolResult(is_error=True)` for the model. A tool marked
`exclusive` waits for the calls before it and runs with nothing else. Calls a codec guessed
(`executable=False`) are never run: they are shown as a `warning` chunk and the model is told.
Only a session-wide stop (`RunAborted`: token budget, handoff depth) cancels the turn.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from duckflow.core.chunks import (
    ToolCallChunk,
    ToolCallData,
    ToolResponseChunk,
    ToolResponseData,
    warning,
)
from duckflow.core.errors import ToolNotFoundError, ToolValidationError
from duckflow.core.run import RunAborted, RunContext, count_text_tokens
from duckflow.core.tools import Approval, Tool, ToolContext, result_to_text
from duckflow.llm.types import Message, ToolCall, ToolResult

if TYPE_CHECKING:
    from duckflow.protocols.codec import Codec

TRACE_RESULT_LIMIT = 2000


async def run_tool_calls(
    run: RunContext,
    calls: Sequence[ToolCall],
    tools: Mapping[str, Tool],
    *,
    max_parallel: int = 8,
    approval: Approval | None = None,
) -> list[ToolResult]:
    """Run `calls` and return their results in the order of the calls (`approval`: the gate's
    answer, given to each tool as `ToolContext.approval`)."""
    agent = run.agent.name
    results: list[ToolResult | None] = [None] * len(calls)
    runnable: list[int] = []
    for i, call in enumerate(calls):
        if not call.executable:
            message = (f"The model proposed calling '{call.name}', but the call was guessed from "
                       "unclear text, so it was not run.")
            run.emit(warning(agent, "proposed_call", message, tool=call.name,
                             arguments=call.arguments, confidence=call.confidence, source=call.source))
            results[i] = ToolResult(call.id, call.name, "not run: this call was reconstructed from "
                                    "malformed text and needs to be issued again exactly if intended",
                                    is_error=True)
            continue
        run.emit(ToolCallChunk(agent=agent, data=ToolCallData(id=call.id, name=call.name,
                                                              arguments=call.arguments)))
        runnable.append(i)

    limit = asyncio.Semaphore(max(1, max_parallel))

    async def one(i: int) -> None:
        results[i] = await _run_one(run, calls[i], tools, limit, approval)

    batch: list[int] = []
    for i in runnable:
        known = tools.get(calls[i].name)
        if known is not None and known.exclusive:
            await _run_batch(batch, one)
            batch = []
            await one(i)
        else:
            batch.append(i)
    await _run_batch(batch, one)
    return [r for r in results if r is not None]


async def _run_batch(batch: list[int], one: Callable[[int], Coroutine[Any, Any, None]]) -> None:
    if not batch:
        return
    if len(batch) == 1:
        await one(batch[0])
        return
    try:
        async with asyncio.TaskGroup() as group:
            for i in batch:
                group.create_task(one(i))
    except* RunAborted as aborted:
        raise aborted.exceptions[0] from None


async def _run_one(run: RunContext, call: ToolCall, tools: Mapping[str, Tool],
                   limit: asyncio.Semaphore, approval: Approval | None = None) -> ToolResult:
    agent = run.agent
    tool = tools.get(call.name)
    if tool is None:
        missing = ToolNotFoundError(f"the model called '{call.name}', which this agent does not have",
                                    hint="available tools: " + (", ".join(sorted(tools)) or "none"))
        run.fail(missing, tool=call.name)
        content, is_error = str(missing), True
    else:
        async with limit:
            await run.before_call(f"tool {call.name}")
            if run.tracing:
                run.trace_event("tool_start", tool=call.name, call_id=call.id, arguments=call.arguments)
            started = time.perf_counter()
            deadline = asyncio.timeout(tool.timeout_s)
            try:
                async with deadline:
                    value = await tool.invoke(
                        call.arguments, ToolContext(run.session.id, agent.name, agent.extra_cfg, run, approval))
                content, is_error = result_to_text(value), False
            except TimeoutError as exc:
                content = (f"{call.name} timed out after {tool.timeout_s} s" if deadline.expired()
                           else f"{call.name} failed: TimeoutError: {exc}")
                is_error = True
            except ToolValidationError as exc:
                run.fail(exc, tool=call.name)
                content, is_error = str(exc), True
            except RunAborted:
                raise
            except Exception as exc:  # the tool's failure goes back to the model
                content, is_error = f"{call.name} failed: {type(exc).__name__}: {exc}", True
            if run.tracing:  # tokens (seed 004 app. C): the arguments the model wrote, the result it will read
                duration_ms = round((time.perf_counter() - started) * 1000, 3)
                run.trace_event("tool_end", tool=call.name, call_id=call.id,
                                tok_prompt=count_text_tokens(json.dumps(call.arguments, ensure_ascii=False, default=str)),
                                tok_completion=count_text_tokens(content), duration_ms=duration_ms,
                                result=content[:TRACE_RESULT_LIMIT], is_error=is_error)
    run.emit(ToolResponseChunk(agent=agent.name, data=ToolResponseData(
        id=call.id, name=call.name, content=content, is_error=is_error)))
    if run.token_guard is not None:  # tool I/O counts too: arguments + result
        io_text = json.dumps(call.arguments, ensure_ascii=False, default=str) + content
        await run.count(count_text_tokens(io_text))
    return ToolResult(call.id, call.name, content, is_error)


def add_results(messages: list[Message], results: list[ToolResult], codec: Codec) -> None:
    """Tool results as the model reads them: tool messages (native), or one encoded user message."""
    if codec.native:
        messages.extend(Message("tool", r.content, tool_call_id=r.call_id, name=r.name) for r in results)
    else:
        messages.append(Message("user", codec.encode_results(results)))
