"""One companion turn, end to end (docs/ARCHITECTURE.md "One message, end to end", steps 2-5), on core's loop.

Base + Main prompts from the AgentState → the Main model's JSON decision (streamed: its
`reply` field reaches the person as it is written) → at most one allowed transition → when
the decision says `base_main_specialized`, the Specialized call for the current step, decoded
by the session's codec into tool calls → each call through the gate → approved calls run by
core's tool runner → results into the state, the decision log and the trace → REVIEW (or
back to PLANNING on an error or a denied approval). Model calls, tool runs, the TokenGuard,
guardrails and trace are core's (`engine.EngineLoop`); every step emits core `Chunk`s into
one `ChunkHub` (one seq per session). `stream(text)` is the one async function channels use.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from duckflow.companion import checks, testfirst, vitals
from duckflow.companion.actions import ActionRunner, CallOutcome
from duckflow.companion.asking import take_answer
from duckflow.companion.chunkhub import ChunkHub
from duckflow.companion.context import (
    allowed_next,
    apply_state_delta,
    prompt_inputs,
)
from duckflow.companion.decision import MainDecision, ReplyStreamer, Silent, read_decision
from duckflow.companion.engine import MAIN_AGENT, EngineLoop
from duckflow.companion.fivefields import keep_consistent
from duckflow.companion.live import LiveMixin
from duckflow.companion.owner import StateOwner
from duckflow.companion.planmarks import lift_denials
from duckflow.companion.policy import DialogPolicy
from duckflow.companion.reply import compose_reply
from duckflow.companion.state import AgentState, Status, Step
from duckflow.companion.steps import StepsMixin
from duckflow.companion.transitions import TransitionRecord
from duckflow.companion.turnctx import TurnContext, TurnResult
from duckflow.companion.twocall_end import check_before_done
from duckflow.core.chunks import (
    AnyChunk,
    DecisionChunk,
    DecisionData,
    ReplyChunk,
    ReplyData,
    StateChunk,
    StateData,
    delta,
)
from duckflow.core.errors import CoreError
from duckflow.core.model_call import Feed
from duckflow.core.run import RunAborted
from duckflow.errors import DuckflowError
from duckflow.llm.types import Message, Model
from duckflow.prompts.budget import BuiltPrompts, LayerBudget, build_prompts
from duckflow.prompts.render import PromptBuilder
from duckflow.protocols.codec import Codec

if TYPE_CHECKING:
    from duckflow.companion.projectnotes import ProjectNotes
    from duckflow.core.mcphub import McpHub

# a name with a file's extension (`calc.add` in "add type hints to calc.add" names no file)
FILE_NAME = re.compile(r"\.(py|pyi|txt|md|rst|json|jsonl|csv|tsv|toml|ya?ml|ini|cfg|conf|env|js|mjs|cjs|ts|tsx|jsx|"
                       r"html?|css|scss|sh|bash|rs|go|c|h|cc|cpp|hpp|java|kt|rb|php|sql|xml|lock|log|ipynb)$")
CONTINUE_TEXT = "(no new message: continue the task from the evidence)"
P = ParamSpec("P")
R = TypeVar("R")


def _one_write_per_stretch(
    turn: Callable[Concatenate[CompanionSession, P], Awaitable[R]],
) -> Callable[Concatenate[CompanionSession, P], Coroutine[Any, Any, R]]:
    """A turn's state changes are written at its flush points, not one write each
    (`StateOwner.coalesced`: before every tool run, when an approval is asked, at the end)."""

    @functools.wraps(turn)
    async def run(self: CompanionSession, *args: P.args, **kwargs: P.kwargs) -> R:
        with self.owner.coalesced():
            return await turn(self, *args, **kwargs)

    return run


class CompanionSession(LiveMixin, StepsMixin):
    """Drives one conversation; all state lives in the StateOwner, all running is core's."""

    def __init__(
        self,
        owner: StateOwner,
        model: Model,
        runner: ActionRunner,
        *,
        codec: Codec | None = None,
        builder: PromptBuilder | None = None,
        budget: LayerBudget | None = None,
        policy: DialogPolicy | None = None,
        specialized_model: Model | None = None,
        trace: Any = None,
        token_guard: Any = None,
        guardrails: Sequence[Any] = (),
        output_guardrails: Sequence[Any] = (),
        mode: str = "layered",
    ) -> None:
        self.owner = owner
        self.model = model
        self.specialized_model = specialized_model or model
        self.runner = runner
        self.codec = codec
        self.builder = builder or PromptBuilder("en")
        self.budget = budget or LayerBudget()
        self.policy = policy or DialogPolicy()
        self.trace = trace
        # "layered" = Base+Main then Specialized (seed 001); "single" = one call per turn for
        # small models (companion/singlecall.py, when present, takes the turn over)
        self.mode = mode
        self.task_budget: Any = None  # the TaskBudget of model calls and seconds (companion/task.py)
        self.engine = EngineLoop(owner.state.session_id, model, specialized_model=self.specialized_model,
                                 tools=list(runner.tools), root=runner.root, emit=self._emit,
                                 trace=trace, token_guard=token_guard, guardrails=guardrails,
                                 output_guardrails=output_guardrails)
        self.chunks = ChunkHub(self.engine.session.seq, MAIN_AGENT)
        runner.engine = self.engine
        runner.before_run = owner.flush  # the state is stored before a tool changes the workspace
        runner.guarded = lambda: checks.protected_paths(self)  # the task's tests, kept (testguard.py)
        runner.hold = lambda call: testfirst.hold(checks.log_of(self), call, runner.read_text)
        self.last_tokens: dict[str, int] = {}
        self.corrections: list[str] = []  # typed during a task: the task's next step gets them
        self.turn = TurnContext()  # what the turns hand each other between steps (not saved)
        self._decision_schema: dict[str, Any] | None = None
        self.project: ProjectNotes | None = None  # AGENTS.md (factory.py sets it from the config)
        self.mcp: McpHub | None = None  # MCP servers' connections (factory.py; closed with the session)
        self.open_notes: list[tuple[str, str]] = []  # (code, line) said as the first turn starts
        self.asked_codec: Any = None  # --codec / --mode as the person gave them (companion/seats.py)
        self.asked_mode: str | None = None

    def _emit(self, chunk: AnyChunk) -> None:
        self.chunks.emit(chunk)

    @property
    def state(self) -> AgentState:
        return self.owner.state

    @property
    def model_time_s(self) -> float:
        return self.engine.model_time_s

    @model_time_s.setter
    def model_time_s(self, value: float) -> None:
        self.engine.model_time_s = value

    # -- entry points ---------------------------------------------------------------------
    @_one_write_per_stretch
    async def handle_message(self, text: str) -> TurnResult:
        """A message from the person: a new utterance (the transition limiter resets)."""
        self.chunks.start_turn()
        tripped = await self.engine.check("input", text)
        if tripped is not None:
            self.owner.set_status(Status.REQUIRES_USER_INPUT, f"input refused: {tripped.message}")
            return self._stopped(f"I can't take that request: {tripped.message}", "guardrail")
        self.owner.new_utterance()
        self.owner.change("the person is back", vitals.rest)
        self.turn.repeats = 0  # repeats of a denied action, counted since the person spoke
        self.turn.said = text
        lift_denials(self, text)
        answer = take_answer(self, text)  # the answer to a question the model asked, when one is open
        if self.state.status in (Status.REQUIRES_USER_INPUT, Status.ERROR) and not self.state.pending_gate:
            self.owner.set_status(Status.IN_PROGRESS, "the person answered")
        if self.state.recovery_retries:  # the person stepped in: the recovery budget starts again
            self.owner.change("recovery retries reset", lambda s: setattr(s, "recovery_retries", 0))
        fresh = not self.state.task
        if self.state.step == Step.DONE:
            self._transition(Step.PLANNING, "a new request after a finished task", "outcome")
            fresh = True
        if fresh:
            self.owner.change("task", lambda s: setattr(s, "task", text.strip()))
        # stored before the first model call, which can take minutes on a local model: a process
        # killed in it (a closed terminal, the OOM killer) keeps the task to resume
        self.owner.flush()
        return await self._guarded(self._turn(answer or text))

    @_one_write_per_stretch
    async def continue_task(self, *, observed: bool) -> TurnResult:
        """Work with no new message; `observed` (tool results arrived) starts a new utterance.

        Corrections typed while the task ran are this step's message (a new utterance). The
        vitals are checked first: low stamina stops with a summary and a proposed break or
        smaller step; low focus restates the goal and re-plans (companion/vitals.py)."""
        self.chunks.start_turn()
        said = self.take_corrections()
        if said:
            self.turn.said = said
        if observed or said:
            self.owner.new_utterance()
        if self.state.status == Status.REQUIRES_USER_INPUT and not self.state.pending_gate:
            self.owner.set_status(Status.IN_PROGRESS, "resumed")  # the task never asks itself to go on
        self.owner.change("task turn", vitals.tire)
        action = vitals.check(self.state)
        if action is not None and action.kind == "break":
            self.chunks.notice("vitals", f"stamina low ({self.state.vitals.stamina:.2f}): proposing a break")
            self.owner.set_status(Status.REQUIRES_USER_INPUT, "low stamina: proposed a break")
            self.owner.change("exchange", lambda s: s.add_exchange("(continued)", action.message))
            self._reply(action.message)
            return self._result(action.message, None, [], "pending_user")
        if action is not None and action.kind == "refocus":
            self._refocus(action.message)
            said = f"{action.message}\n{said}" if said else action.message
        return await self._guarded(self._turn(said))

    @_one_write_per_stretch
    async def answer_approval(self, granted: bool, *, by: str = "user", note: str | None = None) -> TurnResult:
        """The person's yes/no on the pending approval (also after a restart)."""
        job = self.state.pending_job
        if not self.state.pending_gate or not job:
            raise DuckflowError("no approval is waiting in this session", hint="see `duckflow status`")
        self.chunks.start_turn()
        self.owner.new_utterance()
        self.turn.said = "(approval: " + ("yes)" if granted else "no)")
        current = self.runner.gate.get(job["job_id"])
        if current.status == "pending":
            self.runner.gate.decide(job["job_id"], granted, by, note)
        else:
            granted = current.status in ("granted", "auto_approved")
            by = current.decision.by if current.decision is not None else "elsewhere (duckflow approvals)"
        return await self._guarded(self._after_answer(job, granted, by))

    @_one_write_per_stretch
    async def resume_pending(self) -> TurnResult | None:
        """After a restart: if the pending job was answered elsewhere (`duckflow approvals`), go on."""
        job = self.state.pending_job
        if not self.state.pending_gate or not job:
            return None
        current = self.runner.gate.get(job["job_id"])
        if current.status == "pending":
            return None
        self.chunks.start_turn()
        self.owner.new_utterance()
        by = current.decision.by if current.decision is not None else "elsewhere (duckflow approvals)"
        return await self._guarded(self._after_answer(job, current.status in ("granted", "auto_approved"), by))

    async def _guarded(self, turn: Awaitable[TurnResult]) -> TurnResult:
        """A turn that the engine may stop: past the TokenGuard's block line the task stops, state kept.

        Traced like any agent run: `agent_start` / `agent_end` with the step and status."""
        run = self.engine.run_for(self.engine.main)
        started = time.perf_counter()
        run.trace_event("agent_start", step=self.state.step.value, status=self.state.status.value)
        result: TurnResult | None = None
        try:
            result = await turn
            return result
        except RunAborted as aborted:
            err = aborted.error
            self.owner.set_status(Status.REQUIRES_USER_INPUT, f"stopped: {err.message}"[:200])
            hint = err.hint or "start a new session"
            text = (f"Stopped: {err.message}. The task is kept as it was; {hint} "
                    "(`duckflow chat --new` starts a new session).")
            return self._stopped(text, err.code)
        except Exception as exc:  # a failure nobody turned into a reply: save, then let it go up
            self.note_interrupted(exc.message if isinstance(exc, DuckflowError)
                                  else f"{type(exc).__name__}: {exc}")
            raise
        finally:
            run.trace_event("agent_end", step=self.state.step.value, status=self.state.status.value,
                            result=(result.next_step if result is not None else "aborted"),
                            duration_ms=round((time.perf_counter() - started) * 1000, 3))

    def _stopped(self, text: str, why: str) -> TurnResult:
        self._reply(text)
        return self._result(text, None, [], "pending_user", stopped=why)

    # -- the turn ---------------------------------------------------------------------------
    async def _turn(self, user_text: str | None) -> TurnResult:
        from duckflow.protocols.filenames import plausible_paths

        # the files the task names: a write to another existing file is gated as what it is
        self.runner.named = tuple(p for p in plausible_paths(self.state.task or "", [])
                                  if FILE_NAME.search(p)) or None
        if self.mode == "single":  # one constrained reply per step (small models)
            from duckflow.companion.singlecall import single_turn

            return await single_turn(self, user_text)
        state = self.state
        built = self._build()
        if built.report.cuts:
            self.chunks.notice("budget_cut", "prompt budget: cut " + "; ".join(built.report.cuts),
                               cuts=built.report.cuts)
        system = f"{built.base}\n\n{built.main}"
        user = Message("user", user_text if user_text is not None else CONTINUE_TEXT)
        result_raw: list[str] = []
        streamed: list[ReplyStreamer] = []

        async def ask(reask: str | None) -> str:
            msgs = [Message("system", system), user]
            if reask is not None:
                msgs += [Message("assistant", result_raw[-1] if result_raw else ""), Message("user", reask)]
            feed: Feed = Silent() if self.engine.holds_output or streamed else ReplyStreamer(
                lambda t: self._emit(delta(MAIN_AGENT, t)))
            if isinstance(feed, ReplyStreamer):
                streamed.append(feed)
            reply = await self.engine.call("main", msgs, streamer=feed, settings=self._decision_settings())
            result_raw.append(reply.text)
            cut[:] = [reply.cut_off]
            if reply.cut_off:  # asked again by read_decision: the person is told why the wait goes on
                self.chunks.notice("reasked", "the decision was cut off at its length limit; asking again")
            return reply.text

        cut: list[bool] = [False]
        try:
            dr = await read_decision(ask, state.step.value, cut=lambda: cut[0])
        except CoreError as exc:  # the model failed after its retries: say so, keep the state
            self.note_interrupted(f"model call failed: {exc.message}")
            text = f"The model call failed: {exc.message}" + (f" ({exc.hint})" if exc.hint else "")
            self._reply(text)
            return self._result(text, None, [], "pending_user")
        d = dr.decision
        if dr.safe_default:  # unreadable twice (garbage, 100,000 brackets): wait for the person
            self.note_interrupted(f"the model's decision could not be read: {'; '.join(dr.errors[:2])}")
        if dr.repairs:
            self.chunks.notice("json_repaired", "repaired the decision JSON: " + "; ".join(dr.repairs))
        if dr.reasked and not dr.safe_default:
            self.chunks.notice("json_reasked", "the decision JSON was invalid; re-asked once: "
                               + "; ".join(dr.errors[:3]))
        self._emit(DecisionChunk(agent=MAIN_AGENT, data=DecisionData(
            rationale=d.rationale, step=d.step, pattern=d.prompt_pattern, next_step=d.next_step,
            goal_consistency=d.goal_consistency, constraint_check=d.constraint_check,
            safe_default=dr.safe_default)))

        def note_decision(s: AgentState) -> None:
            apply_state_delta(s, d.state_delta)
            s.log_decision(d.rationale)
            if d.goal_consistency.strip().lower().startswith("no"):
                s.vitals.drift()  # the model itself says this step does not serve the goal

        self.owner.change("decision", note_decision)
        outcomes: list[CallOutcome] = []
        extra_text = ""
        moved: TransitionRecord | None = None
        if state.pending_gate:
            self.chunks.notice("approval_pending", "an approval is pending: no step change, no new action")
        else:
            target = Step(d.step)
            if target == Step.DONE != state.step:  # the task's own check runs before it may end
                outcomes = await check_before_done(self, d)
                if outcomes and (state.pending_gate or not checks.log_of(self).met):
                    target = state.step  # not met (or waiting for a person): not done
            if target != state.step:
                moved = self._transition(target, d.rationale, "decision")
                if moved.allowed and moved.from_step == Step.PLANNING and target == Step.EXECUTION:
                    self.approve_plan(d.rationale)  # the plan becomes the contract of EXECUTION
            refused = moved is not None and not moved.allowed
            if not outcomes and d.prompt_pattern == "base_main_specialized" and not refused and state.step in (
                Step.PLANNING, Step.EXECUTION, Step.REVIEW
            ):
                try:
                    extra_text, outcomes = await self._specialized(user_text, d)
                except CoreError as exc:  # the Specialized model call failed: keep the state, say so
                    self.owner.set_status(Status.REQUIRES_USER_INPUT, f"model call failed: {exc.message}")
                    extra_text = f"The {state.step.value.lower()} call failed: {exc.message}"
        reply = compose_reply(self.state, self.policy, self.runner.op_class, user_text, d, extra_text,
                              outcomes, dr.message)
        tripped = await self.engine.check("output", reply)
        if tripped is not None:
            reply = f"(a reply was withheld by a guardrail: {tripped.message})"
        self.owner.change("exchange", lambda s: s.add_exchange(user_text or "(continued)", reply))
        self._reply(reply)
        waits = self.state.status == Status.REQUIRES_USER_INPUT  # (a question asked, a plan refused)
        return self._result(reply, d, outcomes, "pending_user" if waits else d.next_step)

    def _decision_settings(self) -> Any:
        """Local models: the decision bounded and constrained by its JSON schema (llm.constrain)."""
        from duckflow.companion.decision import decision_schema
        from duckflow.llm.constrain import constrained

        if self._decision_schema is None:  # built once per session (constrained() copies it)
            self._decision_schema = decision_schema()
        return constrained(self.model, max_tokens=400, json_schema=self._decision_schema,
                           enabled=getattr(self, "constrained_decoding", True))

    def _reply(self, text: str) -> None:
        s = self.state
        self._emit(ReplyChunk(agent=MAIN_AGENT, data=ReplyData(text=text, step=s.step.value,
                                                               status=s.status.value)))

    def _build(self, specialized_step: str | None = None, tools_text: str = "") -> BuiltPrompts:
        inputs = prompt_inputs(
            self.state, evidence=self.state.evidence,
            allowed=allowed_next(self.state, self.owner.controller.table), tools=tools_text,
        )
        inputs.project = self.project_text()
        built = build_prompts(self.builder, inputs, self.budget, specialized_step=specialized_step,
                              counter=self._own_counter())
        self.last_tokens = dict(built.report.tokens)
        return built

    def project_text(self) -> str:
        """The AGENTS.md that apply now (the root's; the nearest above a file the task names or
        this session wrote), framed; a trim or an unreadable file is told once, never silent."""
        while self.open_notes:
            code, line = self.open_notes.pop(0)
            self.chunks.notice(code, line)
        if self.project is None:
            return ""
        read = self.project.current([*self.runner.written, *(self.runner.named or ())])
        for note in self.project.unsaid(read):
            self.chunks.notice("project_notes", note)
        return read.text

    def _own_counter(self) -> Any:
        """The model's own tokenizer when it has one (in-process local models), else None (tiktoken)."""
        inner: Any = self.model
        while getattr(inner, "models", None):
            inner = inner.models[0]
        count = getattr(inner, "count_tokens", None)
        return count if callable(count) else None

    def _transition(self, to: Step, reason: str, source: Any, status: Status | None = None) -> TransitionRecord:
        if to == Step.DONE and status is None:
            status = Status.SUCCESS
        rec = self.owner.transition(to, reason, source=source, status=status)
        self._state_chunk(rec)
        if rec.allowed:  # the five fields kept consistent at each move (companion/fivefields.py)
            keep_consistent(self)
        return rec

    def _state_chunk(self, rec: TransitionRecord) -> None:
        self._emit(StateChunk(agent=MAIN_AGENT, data=StateData(
            from_step=rec.from_step.value, to_step=rec.to_step.value, status=self.state.status.value,
            source=str(rec.source), allowed=rec.allowed, reason=rec.line())))

    # -- the reply ------------------------------------------------------------------------
    def _result(self, reply: str, d: MainDecision | None, outcomes: list[CallOutcome], next_step: str,
                *, stopped: str | None = None) -> TurnResult:
        s = self.state
        return TurnResult(reply, s.step, s.status, d, outcomes, s.pending_job if s.pending_gate else None,
                          list(self.chunks.turn), dict(self.last_tokens), next_step, stopped)
