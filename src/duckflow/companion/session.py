"""One companion turn, end to end (DESIGN.md "One message, end to end", steps 4-7).

Base + Main prompts from the AgentState → the Main model's JSON decision → at most one
allowed transition → when the decision says `base_main_specialized`, the Specialized call for
the current step, decoded by the session's codec into tool calls → each call through the gate
→ approved calls run by the workspace tools → results into the state, the decision log and
the trace → REVIEW (or back to PLANNING on an error or a denied approval).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from duckflow.companion.actions import ActionRunner, CallOutcome, call_from_dict, call_to_dict
from duckflow.companion.context import (
    allowed_next,
    apply_state_delta,
    file_context,
    prompt_inputs,
    symops_vitals,
)
from duckflow.companion.decision import MainDecision, read_decision
from duckflow.companion.events import Event, EventSink
from duckflow.companion.owner import StateOwner
from duckflow.companion.plan import specs_for_calls
from duckflow.companion.policy import DialogPolicy
from duckflow.companion.reply import compose_reply, outcome_text
from duckflow.companion.state import AgentState, Status, Step
from duckflow.companion.transitions import TransitionRecord
from duckflow.errors import DuckflowError
from duckflow.llm.types import Message, Model, ModelResponse, ToolCall, ToolSpec, complete
from duckflow.prompts.budget import BuiltPrompts, LayerBudget, build_prompts
from duckflow.prompts.render import PromptBuilder
from duckflow.protocols.codec import Codec

CONTINUE_TEXT = "(no new message: continue the task from the evidence)"

@dataclass
class TurnResult:
    reply: str
    step: Step
    status: Status
    decision: MainDecision | None = None
    outcomes: list[CallOutcome] = field(default_factory=list)
    pending: dict[str, Any] | None = None
    events: list[Event] = field(default_factory=list)
    tokens: dict[str, int] = field(default_factory=dict)
    next_step: str = "pending_user"

    @property
    def ran_tools(self) -> bool:
        return any(o.status in ("ok", "error", "refused") for o in self.outcomes)


class CompanionSession:
    """Drives one conversation; all state lives in the StateOwner."""

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
        events: EventSink | None = None,
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
        self.events = events or EventSink()
        self.model_time_s = 0.0
        self.last_tokens: dict[str, int] = {}

    @property
    def state(self) -> AgentState:
        return self.owner.state

    # -- entry points ---------------------------------------------------------------------
    async def handle_message(self, text: str) -> TurnResult:
        """A message from the person: a new utterance (the transition limiter resets)."""
        self.owner.new_utterance()
        if self.state.recovery_retries:  # the person stepped in: the recovery budget starts again
            self.owner.change("recovery retries reset", lambda s: setattr(s, "recovery_retries", 0))
        fresh = not self.state.task
        if self.state.step == Step.DONE:
            self._transition(Step.PLANNING, "a new request after a finished task", "outcome")
            fresh = True
        if fresh:
            self.owner.change("task", lambda s: setattr(s, "task", text.strip()))
        return await self._turn(text)

    async def continue_task(self, *, observed: bool) -> TurnResult:
        """Work with no new message; `observed` (tool results arrived) starts a new utterance."""
        if observed:
            self.owner.new_utterance()
        return await self._turn(None)

    async def answer_approval(self, granted: bool, *, by: str = "user", note: str | None = None) -> TurnResult:
        """The person's yes/no on the pending approval (also after a restart)."""
        job = self.state.pending_job
        if not self.state.pending_gate or not job:
            raise DuckflowError("no approval is waiting in this session", hint="see `duckflow status`")
        self.events.start_turn()
        self.owner.new_utterance()
        current = self.runner.gate.get(job["job_id"])
        if current.status == "pending":
            self.runner.gate.decide(job["job_id"], granted, by, note)
        else:
            granted = current.status in ("granted", "auto_approved")
        return await self._after_answer(job, granted)

    async def resume_pending(self) -> TurnResult | None:
        """After a restart: if the pending job was answered elsewhere (`duckflow approvals`), go on."""
        job = self.state.pending_job
        if not self.state.pending_gate or not job:
            return None
        current = self.runner.gate.get(job["job_id"])
        if current.status == "pending":
            return None
        self.events.start_turn()
        self.owner.new_utterance()
        return await self._after_answer(job, current.status in ("granted", "auto_approved"))

    # -- the turn ---------------------------------------------------------------------------
    async def _turn(self, user_text: str | None) -> TurnResult:
        self.events.start_turn()
        state = self.state
        if self.trace is not None:
            self.trace.emit("agent_start", session=state.session_id, agent="companion",
                            step=state.step.value, status=state.status.value)
        built = self._build()
        if built.report.cuts:
            self.events.emit("notice", "prompt budget: cut " + "; ".join(built.report.cuts), cuts=built.report.cuts)
        system = f"{built.base}\n\n{built.main}"
        user = Message("user", user_text if user_text is not None else CONTINUE_TEXT)
        result_raw: list[str] = []

        async def ask(reask: str | None) -> str:
            msgs = [Message("system", system), user]
            if reask is not None:
                msgs += [Message("assistant", result_raw[-1] if result_raw else ""), Message("user", reask)]
            resp = await self._call(self.model, msgs, [], "main")
            result_raw.append(resp.text)
            return resp.text

        try:
            dr = await read_decision(ask, state.step.value)
        except DuckflowError as exc:  # the model failed after its retries: say so, keep the state
            self.owner.set_status(Status.REQUIRES_USER_INPUT, f"model call failed: {exc.message}")
            self.events.emit("error", str(exc))
            return self._result(f"The model call failed: {exc}", None, [], "pending_user")
        d = dr.decision
        if dr.repairs:
            self.events.emit("notice", "repaired the decision JSON: " + "; ".join(dr.repairs))
        if dr.reasked and not dr.safe_default:
            self.events.emit("notice", "the decision JSON was invalid; re-asked once: " + "; ".join(dr.errors[:3]))
        self.events.emit("decision", d.rationale, step=d.step, pattern=d.prompt_pattern,
                         next_step=d.next_step, goal_consistency=d.goal_consistency,
                         constraint_check=d.constraint_check, safe_default=dr.safe_default)
        def note_decision(s: AgentState) -> None:
            apply_state_delta(s, d.state_delta)
            s.log_decision(d.rationale)

        self.owner.change("decision", note_decision)
        outcomes: list[CallOutcome] = []
        extra_text = ""
        moved: TransitionRecord | None = None
        if state.pending_gate:
            self.events.emit("notice", "an approval is pending: no step change, no new action")
        else:
            target = Step(d.step)
            if target != state.step:
                moved = self._transition(target, d.rationale, "decision")
            refused = moved is not None and not moved.allowed
            if d.prompt_pattern == "base_main_specialized" and not refused and state.step in (
                Step.PLANNING, Step.EXECUTION, Step.REVIEW
            ):
                try:
                    extra_text, outcomes = await self._specialized(user_text, d)
                except DuckflowError as exc:  # the Specialized model call failed: keep the state, say so
                    self.owner.set_status(Status.REQUIRES_USER_INPUT, f"model call failed: {exc.message}")
                    self.events.emit("error", str(exc))
                    extra_text = f"The {state.step.value.lower()} call failed: {exc.message}"
        reply = compose_reply(self.state, self.policy, self.runner.op_class, user_text, d, extra_text,
                              outcomes, dr.message)
        self.owner.change("exchange", lambda s: s.add_exchange(user_text or "(continued)", reply))
        self.events.emit("reply", reply)
        if self.trace is not None:
            self.trace.emit("agent_end", session=state.session_id, agent="companion",
                            step=state.step.value, status=state.status.value, result=d.next_step,
                            tok_prompt=sum(self.last_tokens.values()))
        return self._result(reply, d, outcomes, d.next_step)

    def _build(self, specialized_step: str | None = None, tools_text: str = "") -> BuiltPrompts:
        inputs = prompt_inputs(
            self.state, evidence=self.state.evidence,
            allowed=allowed_next(self.state, self.owner.controller.table), tools=tools_text,
        )
        built = build_prompts(self.builder, inputs, self.budget, specialized_step=specialized_step)
        self.last_tokens = dict(built.report.tokens)
        return built

    async def _call(self, model: Model, msgs: list[Message], tools: Sequence[ToolSpec], layer: str) -> ModelResponse:
        self.events.emit("thinking", f"asking {model.name} ({layer})…", layer=layer)
        t0 = time.perf_counter()
        try:
            return await complete(model, msgs, tools=tools)
        finally:
            dt = time.perf_counter() - t0
            self.model_time_s += dt
            if self.trace is not None:
                self.trace.emit("llm_call", session=self.state.session_id, agent="companion",
                                layer=layer, model=model.name, duration_ms=round(dt * 1000, 1))

    def _transition(self, to: Step, reason: str, source: Any, status: Status | None = None) -> TransitionRecord:
        if to == Step.DONE and status is None:
            status = Status.SUCCESS
        rec = self.owner.transition(to, reason, source=source, status=status)
        self.events.emit("transition" if rec.allowed else "refused", rec.line(),
                         from_step=rec.from_step.value, to_step=rec.to_step.value, source=rec.source)
        return rec

    # -- the Specialized call and the tools ---------------------------------------------
    async def _specialized(self, user_text: str | None, d: MainDecision) -> tuple[str, list[CallOutcome]]:
        step = self.state.step
        specs = self.runner.specs
        native = self.codec is None or self.codec.native
        tools_text = "" if native or self.codec is None else self.codec.system_prompt(specs)
        built = self._build(step.value, tools_text)
        request = user_text or self.state.task or self.state.goal or "continue"
        msgs = [Message("system", f"{built.base}\n\n{built.specialized}"),
                Message("user", f"{request}\n\nDecision: {d.rationale}"
                                + file_context(self.state.context_refs, self.runner.read_text))]
        resp = await self._call(self.specialized_model, msgs, specs if native else [], step.value.lower())
        calls, text = self._decode(resp, specs, native)
        if step == Step.PLANNING:
            plan_id = self._plan(text, calls)
            return f"(plan {plan_id} proposed)", await self._run_calls([c for c in calls if c.name in
                                                                    ("read_file", "list_files", "search_code")], d)
        outcomes = await self._run_calls(calls, d)
        return (text if step == Step.REVIEW else ""), outcomes

    def _decode(self, resp: ModelResponse, specs: list[ToolSpec], native: bool) -> tuple[list[ToolCall], str]:
        if native or self.codec is None:
            return list(resp.tool_calls), resp.text
        decoded = self.codec.decode(resp.text, specs)
        for msg in decoded.errors + decoded.warnings:
            self.events.emit("notice", f"{self.codec.name}: {msg}")
        self._vitals_from(resp.text)
        return list(decoded.calls) + list(resp.tool_calls), decoded.text

    def _vitals_from(self, text: str) -> None:
        vitals = symops_vitals(text) if self.codec is not None and self.codec.name == "symops" else None
        if vitals:
            self.owner.change("vitals", lambda s: s.vitals.update_from_symops(vitals))

    def _plan(self, text: str, calls: list[ToolCall]) -> str:
        plans = self.owner.plans
        plan_id = plans.propose(text or "(the model gave no plan text)")
        specs = specs_for_calls(calls)
        if specs:
            plans.set_action_specs(plan_id, specs)
        self.owner.change("plan", lambda s: setattr(s, "plan_id", plan_id))
        self.events.emit("plan", text, plan_id=plan_id, actions=[s.line() for s in specs])
        return plan_id

    async def _run_calls(self, calls: list[ToolCall], d: MainDecision,
                         prior: list[CallOutcome] | None = None) -> list[CallOutcome]:
        """Run calls in order; stop at a pending approval or an error. `prior`: already ran this step."""
        outcomes: list[CallOutcome] = list(prior or [])
        for i, call in enumerate(calls):
            self.events.emit("tool_call", f"{call.name} {call.arguments.get('path', '')}".strip(),
                             call=call_to_dict(call))
            if self.trace is not None:
                self.trace.emit("tool_start", session=self.state.session_id, agent="companion", tool=call.name)
            out = await self.runner.process(call, intent=f"{call.name} for: {self.state.goal or self.state.task}",
                                            rationale=d.rationale)
            outcomes.append(out)
            self._emit_outcome(out)
            if out.status == "pending":
                self._after_execution(outcomes, finish=False)  # what ran before the approval counts
                self._park(out, calls[i + 1:])
                return outcomes
            if out.status in ("error", "refused"):
                break
        self._after_execution(outcomes)
        return outcomes

    def _emit_outcome(self, out: CallOutcome) -> None:
        if out.status == "pending":
            self.events.emit("approval", out.content, job_id=out.job_id, request=out.request or {},
                             call=call_to_dict(out.call))
        elif out.status == "proposed":
            self.events.emit("proposed", out.line(200), call=call_to_dict(out.call))
        else:
            self.events.emit("tool_result", out.line(200), status=out.status, content=out.content,
                             call=call_to_dict(out.call), duration_ms=out.duration_ms)
        if self.trace is not None and out.status in ("ok", "error", "refused"):
            self.trace.emit("tool_end", session=self.state.session_id, agent="companion",
                            tool=out.call.name, result=out.status, duration_ms=round(out.duration_ms, 1))

    def _park(self, out: CallOutcome, rest: list[ToolCall]) -> None:
        req = out.request or {}
        job = {"job_id": out.job_id, "call": call_to_dict(out.call), "queue": [call_to_dict(c) for c in rest],
               "summary": req.get("summary") or out.line(100), "request": req}

        def apply(s: AgentState) -> None:
            s.pending_gate, s.pending_job = True, job

        self.owner.change(f"approval pending: {out.job_id}", apply)
        self._transition(Step.AWAITING_APPROVAL, f"approval needed for {out.call.name}", "outcome",
                         Status.REQUIRES_USER_INPUT)

    def _after_execution(self, outcomes: list[CallOutcome], *, finish: bool = True) -> None:
        """Results into the state; with `finish`, the step follows (REVIEW, or recovery on an error)."""
        ran = [o for o in outcomes if o.status in ("ok", "error", "refused")]
        if not ran:
            return
        failed = [o for o in ran if o.status != "ok"]

        def record(s: AgentState) -> None:
            for o in ran:
                s.add_evidence(o.line(300))
                s.vitals.record_outcome(o.status == "ok")
                path = o.call.arguments.get("path")
                s.log_decision(f"ran {o.call.name} {path or ''}: {o.status}".replace("  ", " "))
                if o.status == "ok" and o.call.name in ("read_file", "write_file", "edit_file") and path:
                    s.add_context_ref(f"file:{path}")
                if o.status == "ok" and o.call.name not in ("read_file", "list_files", "search_code"):
                    s.memory.successful_operations += 1
                    if o.call.name in ("write_file", "edit_file") and path:
                        s.memory.note_file(str(path))
                elif o.status != "ok":
                    s.memory.failed_operations += 1

        self.owner.change("tool results", record)
        if not finish:
            return
        if failed and self.state.step == Step.PLANNING:
            return  # a failed read while planning is evidence for the plan, not an error to recover from
        if failed:
            self.owner.set_status(Status.ERROR, failed[0].line(100))
            rec = self.owner.recover(failed[0].line(100))
            self.events.emit("transition" if rec.allowed else "refused", rec.line(),
                             from_step=rec.from_step.value, to_step=rec.to_step.value, source=rec.source)
        elif self.state.step == Step.EXECUTION and any(o.call.name not in ("read_file", "list_files", "search_code")
                                                         for o in ran):
            self._transition(Step.REVIEW, "execution finished: review the result", "outcome", Status.SUCCESS)

    async def _after_answer(self, job: dict[str, Any], granted: bool) -> TurnResult:
        call = call_from_dict(job["call"])
        queue = [call_from_dict(c) for c in job.get("queue", [])]

        def clear(s: AgentState) -> None:
            s.pending_gate, s.pending_job = False, None
            s.log_decision(f"{'approved' if granted else 'denied'}: job {job['job_id']} {call.name}")

        self.owner.change("approval answered", clear)
        outcomes: list[CallOutcome] = []
        if not granted:
            self._transition(Step.PLANNING, f"denied: job {job['job_id']}", "outcome", Status.REQUIRES_USER_INPUT)
            reply = f"Understood: {call.name} was not run. What should I do instead?"
        else:
            self._transition(Step.EXECUTION, f"approved: job {job['job_id']}", "outcome")
            first = await self.runner.run(call, approved=True)
            self._emit_outcome(first)
            if first.status == "ok" and queue:
                d = MainDecision(rationale="continue the approved plan", goal_consistency="yes",
                                 constraint_check="yes", next_step="continue", step="EXECUTION")
                outcomes = await self._run_calls(queue, d, prior=[first])
            else:
                outcomes = [first]
                self._after_execution(outcomes)
            reply = outcome_text(self.state, outcomes)
        self.owner.change("exchange", lambda s: s.add_exchange("(approval: " + ("yes)" if granted else "no)"), reply))
        self.events.emit("reply", reply)
        return self._result(reply, None, outcomes, "continue" if granted else "pending_user")

    # -- the reply ------------------------------------------------------------------------
    def _result(self, reply: str, d: MainDecision | None, outcomes: list[CallOutcome], next_step: str) -> TurnResult:
        s = self.state
        return TurnResult(reply, s.step, s.status, d, outcomes, s.pending_job if s.pending_gate else None,
                          list(self.events.turn), dict(self.last_tokens), next_step)
