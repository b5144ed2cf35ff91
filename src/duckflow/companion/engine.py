"""The companion on core's loop: its model calls, tool runs, guards, trace and chunk seq go through core.

The companion adds its own parts (state, transitions, prompt layers, policy, gate) around the
engine's pieces, not a second engine: a model call is `core.model_call.call_model` inside a
`core.run.RunContext` (the TokenGuard is asked before it and counts after it, deltas stream
as chunks, `llm_call` is traced); a tool run is `core.tool_runner.run_tool_calls` (timeouts,
`tool_call`/`tool_response` chunks, `tool_start`/`tool_end` trace, tool I/O counted); input
and output guardrails are the core `Guardrail`s. One `core.session.Session` per companion
session numbers every chunk (`seq`), whichever layer emitted it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from duckflow.core.agent import Agent
from duckflow.core.chunks import (
    AnyChunk,
    NoticeChunk,
    NoticeData,
)
from duckflow.core.errors import GuardrailTripped
from duckflow.core.guardrails import Guardrail
from duckflow.core.model_call import Feed, ModelReply, counted_call
from duckflow.core.run import RunContext, TraceSink, null_trace
from duckflow.core.session import Session
from duckflow.core.token_guard import TokenGuard
from duckflow.core.tool_runner import run_tool_calls
from duckflow.core.tools import Approval, Tool
from duckflow.llm.types import Message, Model, ModelSettings, ToolCall, ToolResult, ToolSpec

MAIN_AGENT = "companion"
RAW_TRACE_CHARS = 8000  # of each raw model reply kept in the trace
SPECIALIZED_AGENT = "companion.specialized"


class EngineLoop:
    """Holds the core agents, session and guards of one companion session."""

    def __init__(
        self,
        session_id: str,
        model: Model,
        *,
        specialized_model: Model | None = None,
        tools: Sequence[Tool] = (),
        root: Path | None = None,
        emit: Callable[[AnyChunk], None],
        trace: TraceSink | None = None,
        token_guard: TokenGuard | None = None,
        guardrails: Sequence[Guardrail] = (),
        output_guardrails: Sequence[Guardrail] = (),
    ) -> None:
        self.session = Session(id=session_id)
        self.emit = emit
        self.trace: TraceSink = trace if trace is not None else null_trace()
        self.token_guard = token_guard
        cfg: dict[str, Any] = {"workspace": root} if root is not None else {}
        common: dict[str, Any] = {"trace": self.trace, "token_guard": token_guard,
                                  "guardrails": guardrails, "output_guardrails": output_guardrails}
        self.main = Agent(MAIN_AGENT, model=model, extra_cfg=cfg, **common)
        self.specialized = Agent(SPECIALIZED_AGENT, model=specialized_model or model, tools=tools,
                                 extra_cfg=cfg, **common)
        self._tools = {t.name: t for t in tools}
        self.calls = 0
        self.model_time_s = 0.0
        self.guard_time_s = 0.0  # in the TokenGuard around model calls (its SQLite backend: a thread hop)

    def run_for(self, agent: Agent) -> RunContext:
        return RunContext(self.session, agent, self.emit, self.trace, self.token_guard)

    # -- model calls ------------------------------------------------------------------------
    async def call(self, layer: str, messages: list[Message], specs: Sequence[ToolSpec] = (),
                   *, streamer: Feed | None = None, specialized: bool = False,
                   settings: ModelSettings | None = None) -> ModelReply:
        """One streamed model call on core's path; raises RunAborted past the token limit.
        `settings` (bounds, grammar) wins over the agent's for this call."""
        agent = self.specialized if specialized else self.main
        model = agent.model
        assert model is not None and not isinstance(model, str)
        run = self.run_for(agent)
        self.calls += 1
        reply = await counted_call(run, model, messages, list(specs), settings or agent.settings,
                                   streamer=streamer, turn=self.calls, label=f"the {layer} model call",
                                   progress=f"asking {model.name} ({layer})", user_errors_as_is=False)
        self.model_time_s += reply.model_s
        self.guard_time_s += reply.guard_s
        # the raw reply: in the (masked) trace, and as a notice the CLI shows under --debug
        run.trace_event("llm_reply", layer=layer, model=model.name, text=reply.text[:RAW_TRACE_CHARS],
                        tool_calls=len(reply.calls))
        self.emit(NoticeChunk(agent=agent.name, data=NoticeData(
            code="raw_reply", message=f"{layer} reply from {model.name}:\n{reply.text}", details={"layer": layer})))
        return reply

    # -- guardrails -------------------------------------------------------------------------
    @property
    def holds_output(self) -> bool:
        """With output guardrails, a reply is held back until they pass (nothing streams)."""
        return bool(self.main.output_guardrails)

    async def check(self, stage: str, text: str) -> GuardrailTripped | None:
        """Input or output guardrails on `text`; the first tripwire is emitted and returned."""
        agent = self.main
        guards = agent.guardrails if stage == "input" else agent.guardrails + agent.output_guardrails
        if not guards:
            return None
        run = self.run_for(agent)
        for guard in guards:
            verdict = await (guard.validate_input(text) if stage == "input" else guard.validate_output(text))
            run.trace_event("guardrail", stage=stage, guardrail=verdict.guardrail or guard.name,
                            tripwire=verdict.tripwire, message=verdict.message)
            if verdict.tripwire:
                hint = "rephrase the request" if stage == "input" else "the reply was not shown; ask differently"
                tripped = GuardrailTripped(verdict.message, hint=hint)
                run.fail(tripped)
                return tripped
        return None

    # -- tools ------------------------------------------------------------------------------
    async def run_tool(self, call: ToolCall, *, approved: bool = False,
                       approval: str | None = None, readonly: tuple[str, ...] = (),
                       staging: str = "") -> ToolResult:
        """One call through core's tool runner, with the gate's answer as `ToolContext.approval`
        (`approved`: the call was approved; `approval`: who answered, `person:...`/`auto:...`;
        `readonly`: files an auto-approved command may not change; `staging`: where its writes go)."""
        answer = (Approval(approved, approval or "", readonly, staging)
                  if approved or approval or readonly or staging else None)
        run = self.run_for(self.specialized)
        if not call.id:
            call = dataclasses.replace(call, id=f"call_{self.calls}_{call.name}")
        results = await run_tool_calls(run, [call], self._tools, max_parallel=1, approval=answer)
        return results[0]
