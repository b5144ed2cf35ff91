"""Handoffs: another agent offered as a tool; control comes back to the caller afterwards.

`handoff(target)` builds a Tool `handoff_to_<name>(input)`. Running it streams the target's
chunks (carrying the target's name) into the same session, one level deeper. Past the root
agent's `max_handoff_depth` (3 by default) `HandoffDepthExceeded` stops the whole run with an
error chunk. When the target finishes, the caller's `on_handoff_return(target, outcome)`
decides what the caller's model is told (by default the target's final text).
"""

from __future__ import annotations

import inspect
import re
import time

from duckflow.core.chunks import HandoffChunk, HandoffData
from duckflow.core.errors import HandoffDepthExceeded, ToolExecutionError
from duckflow.core.run import RunAgent, RunContext
from duckflow.core.tools import Tool, ToolContext


def handoff_tool_name(agent_name: str) -> str:
    return "handoff_to_" + (re.sub(r"[^A-Za-z0-9_]+", "_", agent_name).strip("_").lower() or "agent")


def handoff(target: RunAgent, *, name: str | None = None, description: str | None = None) -> Tool:
    """A Tool that hands the conversation to `target` and returns its answer to the caller."""

    async def _handoff(input: str, ctx: ToolContext) -> str:
        """Hand over.

        Args:
            input: The task or question for the other agent, in full.
        """
        run = ctx.run
        if not isinstance(run, RunContext):
            raise ToolExecutionError(
                f"handoff to '{target.name}' can only run inside an agent run",
                hint="call it through Agent.stream()/run(), not tool.invoke()")
        return await run_handoff(run, target, input)

    first_line = (target.instructions.strip().splitlines() or [""])[0]
    return Tool.from_function(
        _handoff,
        name=name or handoff_tool_name(target.name),
        description=description or target.description or
        f"Hand the task to the agent '{target.name}' and get its answer back. {first_line}".strip(),
    )


async def run_handoff(run: RunContext, target: RunAgent, input: str) -> str:
    """Run `target` one level below `run`; return what the caller's model is told."""
    caller = run.agent
    depth = run.depth + 1
    if depth > run.max_depth:
        raise run.abort(HandoffDepthExceeded(
            f"'{caller.name}' tried to hand off to '{target.name}' at depth {depth}, "
            f"beyond the limit of {run.max_depth}",
            hint="agents are probably handing the task back and forth; fix the routing, "
                 "or raise max_handoff_depth on the first agent",
        ), tool=handoff_tool_name(target.name))
    run.emit(HandoffChunk(agent=caller.name, data=HandoffData(
        phase="start", source=caller.name, target=target.name, depth=depth, input=input)))
    run.trace_event("handoff_start", target=target.name, depth=depth)
    started = time.perf_counter()
    outcome = await target.execute(input, run.child(target))
    run.trace_event("handoff_end", target=target.name, depth=depth,
                    duration_ms=round((time.perf_counter() - started) * 1000, 3),
                    result=outcome.text if outcome.error is None else outcome.error.message)
    run.emit(HandoffChunk(agent=caller.name, data=HandoffData(
        phase="return", source=target.name, target=caller.name, depth=depth,
        result=outcome.text if outcome.error is None else None)))
    reply = caller.on_handoff_return(target, outcome)
    if inspect.isawaitable(reply):
        reply = await reply
    if outcome.error is not None:
        raise ToolExecutionError(f"'{target.name}' could not finish: {outcome.error.message}")
    return str(reply)
