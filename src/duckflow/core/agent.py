"""Agent: streams one conversation step through the model, tools, handoffs and guards.

`stream()` runs six stages (seed 004 §3-1), each a hook a subclass may override, and yields
typed chunks:
(1) `_preprocess_messages` (input guardrails first: nothing streams before a refusal),
(2) the model call, (3) deltas as chunks, (4) tool calls run (concurrently, bounded) and their
results sent back, (5) the final answer through `_postprocess_response` and output
guardrails, (6) the `agent_end` trace event with usage. `run()` consumes `stream()`;
`run_sync()` is for scripts.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import time
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Iterator,
    Mapping,
    Sequence,
)
from typing import TYPE_CHECKING, Any, TypeAlias

from duckflow._lazy import lazy_getattr
from duckflow.core.errors import (
    GuardrailTripped,
    MaxTurnsExceeded,
)
from duckflow.core.registry import ToolRegistry
from duckflow.core.run import RunContext, TraceSink, null_trace
from duckflow.core.session import MemorySessions, Session, SessionStore
from duckflow.core.tools import Approval, Tool, as_tool
from duckflow.errors import DuckflowError, UserError

if TYPE_CHECKING:  # bound at run time by _load_run_path (below)
    from pathlib import Path

    from duckflow.core.approvals import Resume, answered, ask, check_answers, waiting
    from duckflow.core.chunks import (
        AnyChunk,
        DoneChunk,
        DoneData,
        UsageChunk,
        delta,
        warning,
    )
    from duckflow.core.codecs import resolve_codec
    from duckflow.core.correction import Corrected, needs_correction, self_correct
    from duckflow.core.guardrails import Guardrail, checks_output
    from duckflow.core.handoffs import handoff
    from duckflow.core.model_call import Feed, ModelReply, counted_call
    from duckflow.core.recall import History, Recall, load_history, recall, remember, save_history
    from duckflow.core.resolve import ModelResolver, registry_resolver
    from duckflow.core.results import AgentOutcome, RunResult
    from duckflow.core.text_stream import FreeTextStreamer, HeldText, action_notice
    from duckflow.core.token_guard import TokenGuard
    from duckflow.core.tool_runner import add_results, run_tool_calls
    from duckflow.core.toprun import TopRun
    from duckflow.llm.types import (
        Message,
        Model,
        ModelSettings,
        ToolCall,
        ToolSpec,
        Usage,
    )
    from duckflow.protocols.codec import Codec, Decoded

# What only a run needs (the chunk models, codecs, the model call, the tool runner, memory ...)
# is imported by the first run, not with `from duckflow import Agent`: the first pydantic model
# class alone costs about as much as `import asyncio, pydantic` (bench startup: the public import
# ≤ 1.2× that). `_load_run_path` binds these names into this module's globals once, so the
# methods below use them as plain globals (no import statement per call); other modules may
# still import them from here (the module `__getattr__`).
_C = "duckflow.core."
_RUN_PATH = {
    **dict.fromkeys(["AnyChunk", "DoneChunk", "DoneData", "UsageChunk", "UsageData", "delta", "warning"],
                    _C + "chunks"),
    "resolve_codec": _C + "codecs",
    **dict.fromkeys(["Corrected", "needs_correction", "self_correct"], _C + "correction"),
    "Guardrail": _C + "guardrails", "checks_output": _C + "guardrails", "handoff": _C + "handoffs",
    "ModelReply": _C + "model_call", "call_model": _C + "model_call", "counted_call": _C + "model_call",
    **dict.fromkeys(["Resume", "waiting", "ask", "answered", "check_answers"], _C + "approvals"),
    "add_results": _C + "tool_runner",
    "Feed": _C + "model_call",
    **dict.fromkeys(["History", "Recall", "load_history", "recall", "remember", "save_history"], _C + "recall"),
    "ModelResolver": _C + "resolve", "registry_resolver": _C + "resolve",
    "AgentOutcome": _C + "results", "RunResult": _C + "results",
    **dict.fromkeys(["FreeTextStreamer", "HeldText", "action_notice"], _C + "text_stream"),
    "TokenGuard": _C + "token_guard", "run_tool_calls": _C + "tool_runner", "TopRun": _C + "toprun",
    **dict.fromkeys(["Message", "Model", "ModelSettings", "ToolCall", "ToolSpec", "Usage"], "duckflow.llm.types"),
    "Codec": "duckflow.protocols.codec", "Decoded": "duckflow.protocols.codec",
}
_run_path_loaded = False


def _load_run_path() -> None:
    """Import what a run needs and bind it into this module's globals (once)."""
    global _run_path_loaded
    if _run_path_loaded:
        return
    namespace = globals()
    for name, module in _RUN_PATH.items():
        namespace[name] = getattr(importlib.import_module(module), name)
    _run_path_loaded = True


__getattr__ = lazy_getattr(globals(), _RUN_PATH)

AgentInput: TypeAlias = "str | Sequence[Message] | Resume"  # Resume: Agent.resume's input


class Agent:
    """An LLM agent: immutable name and instructions; model, memory, limits can change.

    `tools` are Tool objects or plain functions (wrapped); Agents in `tools` or `handoffs`
    become handoff tools. `extra_cfg` is given to every tool through `ToolContext`.
    `codec` is a Codec, a name ("native", "symops", "dml") or None (native when the model
    supports tools, Sym-Ops otherwise). `instructions_files` (AGENTS.md) follow the instructions.
    """

    def __init__(
        self,
        name: str,
        instructions: str = "",
        *,
        model: Model | str | None = None,
        tools: Sequence[Tool | Agent | Callable[..., Any]] = (),
        handoffs: Sequence[Agent | Tool] = (),
        codec: Codec | str | None = None,
        extra_cfg: Mapping[str, Any] | None = None,
        guardrails: Sequence[Guardrail] = (),
        output_guardrails: Sequence[Guardrail] = (),
        token_guard: TokenGuard | None = None,
        trace: TraceSink | None = None,
        memory: History | None = None,
        memory_store: Recall | None = None,
        sessions: SessionStore | None = None,
        model_resolver: ModelResolver | None = None,
        recall_limit: int = 3,
        description: str = "",
        settings: ModelSettings | None = None,
        max_turns: int = 10,
        max_parallel_tools: int = 8,
        max_handoff_depth: int = 3,
        ask_approval: bool = False,
        instructions_files: Sequence[str | Path] = (),
    ) -> None:
        self._name = name
        if instructions_files:  # AGENTS.md and the like, read safely within a budget, as data
            instructions = importlib.import_module("duckflow.core.instruction_files").with_files(
                instructions, list(instructions_files))
        self._instructions = instructions
        self.model = model
        self.codec = codec
        self.extra_cfg: dict[str, Any] = dict(extra_cfg or {})
        self.guardrails = list(guardrails)
        self.output_guardrails = list(output_guardrails)
        self.token_guard = token_guard
        self.trace: TraceSink = trace if trace is not None else null_trace()
        self.memory = memory  # short-term: a ShortTermMemory, or None (the Session's history)
        self.memory_store = memory_store  # long-term: a MemoryStore for recall, or None
        self.sessions: SessionStore = sessions if sessions is not None else MemorySessions()
        self.model_resolver = model_resolver
        self._resolved: tuple[str, Model] | None = None
        self.recall_limit = recall_limit
        self.description = description
        self.settings = settings
        self.max_turns = max_turns
        self.max_parallel_tools = max_parallel_tools
        self.max_handoff_depth = max_handoff_depth
        self.ask_approval = ask_approval  # pause before a tool that needs approval (core/approvals.py)
        items = [*tools, *handoffs]
        self._tools = ToolRegistry(cache_size=max(256, len(items)))
        for item in items:
            if isinstance(item, Agent):
                _load_run_path()
                t = handoff(item)
            else:
                t = as_tool(item)
            if t.name in self._tools:
                raise UserError(f"agent '{name}' has two tools named '{t.name}'",
                                hint="give one of them another name (Tool.from_function(fn, name=...))")
            self._tools.register(t)

    @property
    def name(self) -> str:
        return self._name

    @property
    def instructions(self) -> str:
        return self._instructions

    @property
    def tools(self) -> tuple[Tool, ...]:
        return tuple(self._tools.values())

    def __repr__(self) -> str:
        return f"Agent({self._name!r}, tools={list(self._tools)})"

    @contextlib.contextmanager
    def override(self, *, model: Model | str | None = None,
                 codec: Codec | str | None = None) -> Iterator[Agent]:
        """Swap the model (and codec) for a block, e.g. a ScriptedModel in a user's test."""
        saved = self.model, self.codec
        self.model = model if model is not None else self.model
        self.codec = codec if codec is not None else self.codec
        try:
            yield self
        finally:
            self.model, self.codec = saved

    # --- hooks (override in subclasses) -------------------------------------------------
    def _preprocess_messages(self, input: str | Sequence[Message], history: list[Message],
                             system: str) -> list[Message]:
        """Stage 1: the messages of the first model call (system, history, the input)."""
        _load_run_path()
        messages = [Message("system", system)] if system else []
        messages.extend(history)
        if isinstance(input, str):
            messages.append(Message("user", input))
        else:
            messages.extend(input)
        return messages

    def _postprocess_response(self, text: str) -> str:
        """Stage 5: the final answer before output guardrails (default: stripped)."""
        return text.strip()

    def on_handoff_return(self, target: Agent, outcome: AgentOutcome) -> str | Awaitable[str]:
        """What this agent's model is told when `target` hands back (default: its answer)."""
        return outcome.text

    # --- running -------------------------------------------------------------------------
    async def stream(self, input: AgentInput, *, session: Session | str | None = None
                     ) -> AsyncIterator[AnyChunk]:
        """Run one step and yield its chunks; `seq` continues the session's numbering.

        A failure ends the stream with an `error` chunk (nothing is raised)."""
        top = self._top_run(input, session)
        async with contextlib.aclosing(top.chunks()) as chunks:
            async for chunk in chunks:
                yield chunk

    async def run(self, input: AgentInput, *, session: Session | str | None = None,
                  raise_errors: bool = True) -> RunResult:
        """Run one step to the end: final text, all chunks, usage.

        A failure raises the error that ended the run (`UserError` for a mistake in the
        calling code, a `CoreError` or `ConfigError` otherwise); with `raise_errors=False` it
        is returned in `RunResult.error` instead.
        """
        top = self._top_run(input, session)
        chunks = [c async for c in top.chunks()]
        usage = Usage()
        for c in chunks:
            if isinstance(c, UsageChunk):
                usage = usage + Usage(c.data.prompt_tokens, c.data.completion_tokens)
        result = RunResult(top.outcome.text, chunks, usage, top.session, top.outcome.error, top.outcome.pending)
        if raise_errors and result.error is not None:
            raise result.error
        return result

    async def resume(self, paused: RunResult, answers: Mapping[str, bool | Approval], *,
                     raise_errors: bool = True) -> RunResult:
        """Go on after a run paused for approval: `answers` maps each id of `paused.pending` that
        waits to True, False or an `Approval` (core/approvals.py); the model goes on as in `run()`."""
        _load_run_path()
        if not paused.pending:
            raise UserError("this run is not waiting for an approval", hint="resume a result whose .pending is set")
        resume = Resume(tuple(paused.pending), dict(answers))
        check_answers(resume)
        return await self.run(resume, session=paused.session, raise_errors=raise_errors)

    def run_sync(self, input: AgentInput, *, session: Session | str | None = None,
                 raise_errors: bool = True) -> RunResult:
        """`run()` for scripts without an event loop."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.run(input, session=session, raise_errors=raise_errors))
        raise UserError("run_sync() was called inside a running event loop",
                        hint="use `await agent.run(...)` there")

    def _top_run(self, input: AgentInput, session: Session | str | None) -> TopRun:
        _load_run_path()
        return TopRun(self, input, session, sessions=self.sessions, trace=self.trace,
                      token_guard=self.token_guard, max_depth=self.max_handoff_depth)

    async def execute(self, input: AgentInput, run: RunContext) -> AgentOutcome:
        """Run this agent inside `run` (used by `stream()` and by handoffs)."""
        _load_run_path()
        started = time.perf_counter()
        if run.tracing:
            run.trace_event("agent_start", input=_input_text(input)[:500], depth=run.depth)
        outcome = AgentOutcome()
        status = "aborted"
        try:
            outcome = await self._execute(input, run)
            status = "ok" if outcome.error is None else "error"
        finally:
            if run.tracing:
                run.trace_event(
                    "agent_end", status=status, turns=outcome.turns,
                    tok_prompt=outcome.usage.prompt_tokens, tok_completion=outcome.usage.completion_tokens,
                    duration_ms=round((time.perf_counter() - started) * 1000, 3),
                    result=outcome.text if outcome.error is None else outcome.error.message)
        return outcome

    async def _execute(self, input: AgentInput, run: RunContext) -> AgentOutcome:
        text_in = _input_text(input)
        for guard in self.guardrails:  # input guardrails finish before any model call
            verdict = await guard.validate_input(text_in)
            run.trace_event("guardrail", stage="input", guardrail=verdict.guardrail or guard.name,
                            tripwire=verdict.tripwire, message=verdict.message)
            if verdict.tripwire:
                tripped = GuardrailTripped(verdict.message, hint="rephrase the request")
                run.fail(tripped)
                return AgentOutcome(error=tripped)
        try:
            model = self._resolve_model()
            codec = resolve_codec(self.codec, model)
        except DuckflowError as exc:  # UserError or ConfigError: reported with its own type
            run.fail(exc)
            return AgentOutcome(error=exc)
        specs = [t.spec for t in self._tools.values()]
        system = self._instructions
        if not codec.native and specs:
            system = f"{system}\n\n{codec.system_prompt(specs)}".strip()
        if self.memory_store is not None:
            note = await recall(self.memory_store, text_in, run.session.id, self.recall_limit)
            system = f"{system}\n\n{note}".strip() if note else system
        history = load_history(self.memory, run.session) if run.depth == 0 else []
        if isinstance(input, Resume):  # the paused turn's calls answered, then on as before
            messages = [*([Message("system", system)] if system else []), *history]
            first_new = len(messages)
            add_results(messages, await answered(run, self._name, input, self._tools), codec)
        else:
            messages = self._preprocess_messages(input, history, system)
            first_new = len(messages) - (1 if isinstance(input, str) else len(input))
        usage = Usage()
        final = ""
        # with output guardrails nothing is shown before they pass: the text is held back
        hold = any(checks_output(g) for g in self.guardrails) or bool(self.output_guardrails)
        held: list[str] = []

        def say(text: str) -> None:
            if hold:
                held.append(text)
            else:
                run.emit(delta(self._name, text))

        for turn in range(1, self.max_turns + 1):
            streamer: Any = HeldText(held) if codec.native and hold else None
            if not codec.native:
                streamer = FreeTextStreamer(codec, specs, say,
                                            on_action=lambda item: run.emit(action_notice(self._name, item)))
            try:
                reply = await self._call(run, model, messages, specs if codec.native else [], streamer, turn)
            except DuckflowError as err:  # reported by _call: a ModelCallError or a UserError
                return AgentOutcome(usage=usage, error=err, turns=turn)
            usage = usage + reply.usage
            calls, visible, reply_text = reply.calls, reply.text, reply.text
            if not codec.native:
                decoded = streamer.decode(reply.text) if streamer is not None else codec.decode(reply.text, specs)
                if needs_correction(decoded):
                    try:
                        fixed, extra = await self._correct(run, model, codec, specs, messages, reply.text,
                                                           decoded, turn)
                    except DuckflowError as err:  # the model failed during a re-ask (reported)
                        return AgentOutcome(usage=usage, error=err, turns=turn)
                    usage = usage + extra
                    decoded, reply_text = fixed.decoded, fixed.reply
                    if fixed.failed:  # never readable: the person is told, nothing runs
                        run.emit(warning(self._name, "codec_failed",
                                         f"The {codec.name} reply could not be read after {fixed.rounds} "
                                         "correction(s); nothing was run.", errors=decoded.errors))
                        final = (f"The model's reply could not be read after {fixed.rounds} correction(s), "
                                 "so nothing was run:\n" + "\n".join(f"- {e}" for e in decoded.errors))
                        break
                calls, visible = decoded.calls, decoded.text
                rest = streamer.rest(visible) if streamer is not None else visible
                if rest.strip():
                    say(rest)
            if not calls:
                final = visible
                break
            # provider ids are kept (tool messages must answer them); text-codec ids are ours
            calls = [c if c.id and codec.native else _with_id(c, f"call_{turn}_{n}")
                     for n, c in enumerate(calls, 1)]
            messages.append(Message("assistant", reply_text, tool_calls=calls if codec.native else []))
            pending = waiting(calls, self._tools) if self.ask_approval else []
            if pending:  # a person answers first: the turn is kept, the run pauses
                ask(run, self._name, pending)
                if run.depth == 0:
                    save_history(self.memory, run.session, messages[first_new:])
                run.emit(DoneChunk(agent=self._name, data=DoneData(
                    text="", prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
                    turns=turn, ending="approval")))
                return AgentOutcome(usage=usage, turns=turn, pending=pending)
            add_results(messages, await run_tool_calls(run, calls, self._tools,
                                                        max_parallel=self.max_parallel_tools), codec)
        else:
            limit = MaxTurnsExceeded(
                f"'{self._name}' reached its limit of {self.max_turns} model turns without a final answer",
                hint="raise max_turns, or check why the model keeps calling tools")
            run.fail(limit)
            return AgentOutcome(usage=usage, error=limit, turns=self.max_turns)
        final = self._postprocess_response(final)
        for guard in self.guardrails + self.output_guardrails:
            verdict = await guard.validate_output(final)
            run.trace_event("guardrail", stage="output", guardrail=verdict.guardrail or guard.name,
                            tripwire=verdict.tripwire, message=verdict.message)
            if verdict.tripwire:
                refused = GuardrailTripped(verdict.message, hint="the answer was withheld; ask differently")
                run.fail(refused)
                return AgentOutcome(usage=usage, error=refused, turns=turn)
        if held:  # the guardrails passed: what was held back is shown now
            run.emit(delta(self._name, "".join(held)))
        run.emit(DoneChunk(agent=self._name, data=DoneData(
            text=final, prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens, turns=turn)))
        if run.depth == 0:
            save_history(self.memory, run.session, [*messages[first_new:], Message("assistant", final)])
        if self.memory_store is not None:
            await remember(self.memory_store, run.session.id, text_in, final, self._name)
        return AgentOutcome(final, usage, None, turn)

    async def _call(self, run: RunContext, model: Model, messages: list[Message], specs: list[ToolSpec],
                    streamer: Feed | None, turn: int) -> ModelReply:
        """One model call with its usage counted; a failure is reported and raised."""
        return await counted_call(run, model, messages, specs, self.settings, streamer=streamer, turn=turn,
                                  label=f"model call {turn}")

    async def _correct(self, run: RunContext, model: Model, codec: Codec, specs: list[ToolSpec],
                       messages: list[Message], text: str, decoded: Decoded, turn: int
                       ) -> tuple[Corrected, Usage]:
        """The SelfCorrector for a text-codec reply: ≤ 2 re-asks naming each error.

        The re-asks stream nothing (their text is shown once decoded) and are not kept in
        `messages`: the caller keeps only the reply finally used.
        """
        spent = Usage()
        count = 0

        async def ask(asked: list[Message]) -> str:
            nonlocal spent, count
            count += 1
            run.emit(warning(self._name, "codec_error",
                             f"The {codec.name} reply could not be read; asking again ({count}/2).",
                             errors=list(errors_now)))
            quiet = FreeTextStreamer(codec, specs, lambda _text: None)
            reply = await self._call(run, model, asked, [], quiet, turn)
            spent = spent + reply.usage
            errors_now[:] = codec.decode(reply.text, specs).errors
            return reply.text

        errors_now = list(decoded.errors)
        fixed = await self_correct(ask, codec, specs, messages, text, decoded)
        run.trace_event("self_correct", codec=codec.name, rounds=fixed.rounds, ok=not fixed.failed,
                        errors=[e for _reply, errs in fixed.attempts for e in errs][:20])
        return fixed, spent

    def _resolve_model(self) -> Model:
        if self.model is None:
            raise UserError(f"agent '{self._name}' has no model",
                              hint="pass model=... (a Model, e.g. ScriptedModel, or a name like 'ollama:qwen2.5')")
        if not isinstance(self.model, str):
            return self.model
        if self._resolved is None or self._resolved[0] != self.model:
            _load_run_path()

            def on_event(event: str, fields: dict[str, Any]) -> None:
                self.trace.emit(event, agent=self._name, **fields)

            # a name gets the resolver's retries, fallbacks and circuit breaker; retries traced
            resolve = self.model_resolver or registry_resolver()
            self._resolved = (self.model, resolve(self.model, on_event=on_event))
        return self._resolved[1]


def _input_text(input: AgentInput) -> str:
    if isinstance(input, str):
        return input
    if isinstance(input, Resume):  # no new words from the person
        return ""
    users = [m.content for m in input if m.role == "user"]
    return users[-1] if users else ""


def _with_id(call: ToolCall, call_id: str) -> ToolCall:
    return ToolCall(call.name, call.arguments, call_id, call.executable, call.confidence,
                    call.source, call.raw)


