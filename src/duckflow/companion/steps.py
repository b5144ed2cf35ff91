"""The work steps of a companion turn: the Specialized call, its reply decoded into calls, tools and approvals.

The Specialized call for the current step (cut-off replies asked once more, text-codec replies
self-corrected), its calls run through the gate and core's tool runner in order, a pending
approval parked and answered, and the results written into the state. In PLANNING the reply
becomes the plan and in EXECUTION an open plan's actions run one by one: that contract is
`PlanRunMixin` (planrun.py), this mixin's base. Mixed into `CompanionSession`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from duckflow.companion import checks, testfirst
from duckflow.companion.actions import CallOutcome
from duckflow.companion.context import file_context, symops_vitals
from duckflow.companion.decision import MainDecision, Silent
from duckflow.companion.dml_context import refresh_dml
from duckflow.companion.engine import MAIN_AGENT, SPECIALIZED_AGENT
from duckflow.companion.fivepoints import alternatives_in
from duckflow.companion.plan import PlanError
from duckflow.companion.planmarks import (
    action_words,
    mark_denied,
    mark_ran,
    repeat_words,
    same_call,
)
from duckflow.companion.planrun import PlanRunMixin
from duckflow.companion.rejected import rejected_lines
from duckflow.companion.reply import outcome_text
from duckflow.companion.replygrammar import specialized_settings
from duckflow.companion.state import AgentState, Status, Step
from duckflow.core.chunks import ApprovalChunk, ApprovalData, delta
from duckflow.core.correction import Corrected, self_correct
from duckflow.core.model_call import Feed
from duckflow.core.text_stream import FreeTextStreamer, ProtocolLines
from duckflow.llm.types import Message, ModelSettings, ToolCall, ToolSpec
from duckflow.protocols.codec import Decoded
from duckflow.toolkinds import READ_TOOLS

if TYPE_CHECKING:
    from duckflow.companion.actions import ActionRunner
    from duckflow.companion.chunkhub import ChunkHub
    from duckflow.companion.engine import EngineLoop
    from duckflow.companion.owner import StateOwner
    from duckflow.companion.transitions import Source, TransitionRecord
    from duckflow.companion.turnctx import TurnContext, TurnResult
    from duckflow.core.chunks import AnyChunk
    from duckflow.prompts.budget import BuiltPrompts
    from duckflow.protocols.codec import Codec

READ_ONLY = READ_TOOLS
CUT_REASK = ("Your reply was cut off at its length limit before it ended, so nothing of it was run. "
             "Send it again, shorter: only the actions this step needs.")
REPLAN_ASK = ("Your plan declared no actions. Declare each step of the plan as a tool call "
              "(reads run now; writes, deletes and commands run in EXECUTION after approval).")


class StepsMixin(PlanRunMixin):
    _alternatives: tuple[str, ...] = ()  # what the last Specialized reply offered instead (gate point 4)
    if TYPE_CHECKING:  # provided by CompanionSession
        owner: StateOwner
        runner: ActionRunner
        codec: Codec | None
        engine: EngineLoop
        chunks: ChunkHub
        turn: TurnContext

        @property
        def state(self) -> AgentState: ...
        def _emit(self, chunk: AnyChunk) -> None: ...
        def _build(self, specialized_step: str | None = None, tools_text: str = "") -> BuiltPrompts: ...
        def _transition(self, to: Step, reason: str, source: Source,
                        status: Status | None = None) -> TransitionRecord: ...
        def _state_chunk(self, rec: TransitionRecord) -> None: ...
        def _reply(self, text: str) -> None: ...
        def _result(self, reply: str, d: MainDecision | None, outcomes: list[CallOutcome], next_step: str,
                    *, stopped: str | None = None) -> TurnResult: ...

    # -- the Specialized call -------------------------------------------------------------
    async def _specialized(self, user_text: str | None, d: MainDecision) -> tuple[str, list[CallOutcome]]:
        step = self.state.step
        plan = self.owner.plans.latest()
        if step == Step.EXECUTION and plan is not None and plan.open:
            return "", await self._execute_plan(plan, d)
        request = user_text or self.state.task or self.state.goal or "continue"
        got = await self._ask_specialized(request, d)
        if got is None:
            return "", []
        calls, text = got
        asked = self.turn.take_asked()
        if asked:  # a question for the person: nothing runs until they answer (companion/asking.py)
            from duckflow.companion.asking import pose

            pose(self, asked)  # type: ignore[arg-type]
            return "", []
        if step == Step.PLANNING:
            if not calls:  # a plan must declare its actions (seed 001 §12.1.1): ask once more
                self.chunks.notice("plan_no_actions", "the plan declared no actions; asking for them once more")
                again = await self._ask_specialized(f"{request}\n\n{REPLAN_ASK}", d)
                calls, text = again if again is not None else ([], text)
            try:
                plan_id = self._plan(text, calls)
            except PlanError as exc:
                self.owner.set_status(Status.REQUIRES_USER_INPUT, exc.message)
                return f"No plan was accepted: {exc.message}. Say what should be done, step by step.", []
            return f"(plan {plan_id} proposed)", await self._run_planning_reads(plan_id, d)
        outcomes = await self._run_calls(calls, d)
        return (text if step == Step.REVIEW else ""), outcomes

    async def _ask_specialized(self, request: str, d: MainDecision) -> tuple[list[ToolCall], str] | None:
        """One Specialized call for the current step; None when its reply stays unreadable."""
        step = self.state.step
        specs = self.runner.specs
        native = self.codec is None or self.codec.native
        refresh_dml(self.codec, self.state)  # aliases, S values (DML only; stable across turns)
        tools_text = "" if native or self.codec is None else self.codec.system_prompt(specs)
        built = self._build(step.value, tools_text)
        msgs = [Message("system", f"{built.base}\n\n{built.specialized}"),
                Message("user", f"{request}\n\nDecision: {d.rationale}" + (testfirst.asked_first(self, checks.log_of(self))
                                                                        if step in (Step.PLANNING, Step.EXECUTION) else "")
                                + "".join(f"\n\n{line}" for line in rejected_lines(self.owner.plans.denied_calls()))
                                + file_context(self.state.context_refs, self.runner.read_text))]
        feed: Feed | None = None
        if self.engine.holds_output:
            feed = Silent()
        elif not native and self.codec is not None:
            feed = ProtocolLines(FreeTextStreamer(self.codec, specs, lambda _t: None),  # (the protocol text, as
                                 lambda t: self._emit(delta(SPECIALIZED_AGENT, t)))  # written: its file's lines show)
        # local models: bounded and constrained by the codec's grammar (companion.replygrammar)
        settings = specialized_settings(self, step)
        resp = await self.engine.call(step.value.lower(), msgs, specs if native else [],
                                      streamer=feed, specialized=True, settings=settings)
        if resp.cut_off:  # cut off at its token bound: asked again once, never run as it is
            self.chunks.notice("reasked", "the reply was cut off at its length limit; asking again")
            msgs = [*msgs, Message("assistant", resp.text), Message("user", CUT_REASK)]
            feed = Silent() if feed is not None else None
            resp = await self.engine.call(step.value.lower(), msgs, specs if native else [],
                                          streamer=feed, specialized=True, settings=settings)
            if resp.cut_off:
                self.chunks.notice("reply_unusable", "the reply was cut off again; nothing of it was run")
                return None
        reply_text = resp.text
        decoded: Decoded | None = None
        if not native and self.codec is not None:
            # the reading made while the reply streamed, not a second parse
            first = feed.reading.decode(resp.text) if isinstance(feed, ProtocolLines) else \
                self.codec.decode(resp.text, specs)
            fixed = await self._self_correct(step.value.lower(), msgs, specs, resp.text, first, settings)
            if fixed.failed:  # not readable after two re-asks: the person is told, nothing runs
                self.chunks.notice("codec", f"The model's {self.codec.name} reply could not be read after "
                                   f"{fixed.rounds} correction(s); nothing was run: "
                                   + "; ".join(fixed.decoded.errors[:3]))  # fmt: skip
                return None
            reply_text, decoded = fixed.reply, fixed.decoded
        self._alternatives = tuple(alternatives_in(reply_text))
        return self._decode(reply_text, list(resp.calls), specs, native, decoded)

    async def _self_correct(self, layer: str, msgs: list[Message], specs: list[ToolSpec], text: str,
                            decoded: Decoded, settings: ModelSettings | None = None) -> Corrected:
        """core's SelfCorrector on a text-codec Specialized reply (≤ 2 silent re-asks)."""
        assert self.codec is not None
        codec = self.codec

        async def ask(asked: list[Message]) -> str:
            self.chunks.notice("codec", f"The {codec.name} reply could not be read; asking again.")
            again = await self.engine.call(layer, asked, [], streamer=Silent(), specialized=True,
                                           settings=settings)
            return again.text

        return await self_correct(ask, codec, specs, msgs, text, decoded)

    def _decode(self, text: str, native_calls: list[ToolCall], specs: list[ToolSpec],
                native: bool, decoded: Decoded | None = None) -> tuple[list[ToolCall], str]:
        if native or self.codec is None:
            return native_calls, text
        if decoded is None:
            decoded = self.codec.decode(text, specs)
        for msg in decoded.errors + decoded.warnings:
            self.chunks.notice("codec", f"{self.codec.name}: {msg}")
        self.turn.asked = list(decoded.questions)
        self._vitals_from(text)
        return list(decoded.calls) + native_calls, decoded.text

    def _vitals_from(self, text: str) -> None:
        vitals = symops_vitals(text) if self.codec is not None and self.codec.name == "symops" else None
        if vitals:
            self.owner.change("vitals", lambda s: s.vitals.update_from_symops(vitals))

    # -- tools and approvals --------------------------------------------------------------
    async def _run_calls(self, calls: list[ToolCall], d: MainDecision,
                         prior: list[CallOutcome] | None = None) -> list[CallOutcome]:
        """Run calls in order; stop at a pending approval or an error. `prior`: already ran this step."""
        outcomes: list[CallOutcome] = list(prior or [])
        denied = self.owner.plans.denied_calls()
        for i, call in enumerate(calls):
            no = next((a for a in denied if same_call(call, a.call)), None)
            if no is not None:  # exactly what the person said no to: refused, with their reason
                out = CallOutcome(call, "refused", f"the person said no to exactly this ({no.description}); "
                                  "not run: propose something different")
                outcomes.append(out)
                self.chunks.notice("refused_call", repeat_words(call, no), call=call.to_dict())
                self.turn.repeats += 1
                break
            test = checks.refused_test_write(self, call)  # the task's tests: never the model's to change
            if test:
                outcomes.append(CallOutcome(call, "refused", test))
                self.chunks.notice("refused_call", test, call=call.to_dict())
                break
            out = await self.runner.process(call, intent=f"{call.name} for: {self.state.task or self.state.goal}",
                                            rationale=d.rationale, alternatives=list(self._alternatives))
            outcomes.append(out)
            self._emit_outcome(out)
            if out.status == "pending":
                self._after_execution(outcomes, finish=False)  # what ran before the approval counts
                self._park(out, calls[i + 1:])
                return outcomes
            if out.status in ("error", "refused"):
                break
        self._after_execution(outcomes)
        if self.turn.repeats >= 2:  # again and again: the person decides, no spinning
            self.turn.repeats = 0
            self.owner.set_status(Status.REQUIRES_USER_INPUT, "it proposed again what the person denied")
            self.chunks.notice("question", "It keeps proposing what you said no to. Tell me another "
                               "way to do it, or ask for it again to allow it.")
        return outcomes

    def _emit_outcome(self, out: CallOutcome) -> None:
        """Chunks for what core's tool runner does not say itself: approvals, proposals, refusals."""
        if out.status == "pending":
            self._emit(ApprovalChunk(agent=MAIN_AGENT, data=ApprovalData(
                phase="request", job_id=str(out.job_id), request=out.request or {}, call=out.call.to_dict())))
        elif out.status == "proposed":
            self.chunks.notice("proposed", out.line(200), call=out.call.to_dict())
        elif out.kept_note:  # the task's tests put back (testguard.py), or the assertion kept (testfirst.hold)
            self.chunks.notice("tests_kept" if out.restored else "expectation", out.kept_note, call=out.call.to_dict())
        elif out.unchanged:
            self.chunks.notice("unchanged", out.content.removeprefix("unchanged: "), call=out.call.to_dict())
        elif out.status == "refused":
            self.chunks.notice("refused_call", out.line(200), call=out.call.to_dict())

    def _park(self, out: CallOutcome, rest: list[ToolCall], *, plan: tuple[str, int] | None = None) -> None:
        req = out.request or {}
        job: dict[str, Any] = {"job_id": out.job_id, "call": out.call.to_dict(),
                               "queue": [c.to_dict() for c in rest],
                               "summary": req.get("summary") or out.line(100), "request": req}
        if plan is not None:
            job["plan"] = {"plan_id": plan[0], "index": plan[1]}

        def apply(s: AgentState) -> None:
            s.pending_gate, s.pending_job = True, job

        self.owner.change(f"approval pending: {out.job_id}", apply)
        self._transition(Step.AWAITING_APPROVAL, f"approval needed for {out.call.name}", "outcome",
                         Status.REQUIRES_USER_INPUT)
        self.owner.flush()  # stored at once: the job is in the gate's database, a person may answer it elsewhere
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
                if o.status == "ok" and o.call.name not in READ_ONLY and not o.unchanged:
                    s.memory.successful_operations += 1
                    if o.call.name in ("write_file", "edit_file") and path:
                        s.memory.note_file(str(path))
                elif o.status != "ok":
                    s.memory.failed_operations += 1

        self.owner.change("tool results", record)
        checks.note(self, ran)  # what changed and what checked it (companion/checks.py)
        mark_ran(self, ran)
        if not finish:
            return
        if failed and self.state.step == Step.PLANNING:
            return  # a failed read while planning is evidence for the plan, not an error to recover from
        if failed:
            self.owner.set_status(Status.ERROR, failed[0].line(100))
            rec = self.owner.recover(failed[0].line(100))
            self._state_chunk(rec)
        elif self.state.step == Step.EXECUTION:  # (a task that only reads is reviewed too: it can end)
            why = ("execution finished: review the result" if any(o.call.name not in READ_ONLY
                                                                  and not o.unchanged for o in ran)
                   else "the reads are done: review what they show")
            self._transition(Step.REVIEW, why, "outcome", Status.SUCCESS)

    async def _after_answer(self, job: dict[str, Any], granted: bool, by: str) -> TurnResult:
        call = ToolCall.from_dict(job["call"])
        queue = [ToolCall.from_dict(c) for c in job.get("queue", [])]
        self._emit(ApprovalChunk(agent=MAIN_AGENT, data=ApprovalData(
            phase="answer", job_id=str(job["job_id"]), call=job["call"], granted=granted, by=by)))

        def clear(s: AgentState) -> None:
            s.pending_gate, s.pending_job = False, None
            s.log_decision(f"{'approved' if granted else 'denied'}: job {job['job_id']} {call.name}")

        self.owner.change("approval answered", clear)
        outcomes: list[CallOutcome] = []
        if not granted:
            answered = self.runner.gate.get(job["job_id"]).decision
            words = (answered.note or "").strip() if answered is not None else ""
            self._transition(Step.PLANNING, f"denied: job {job['job_id']}", "outcome",
                             Status.IN_PROGRESS if words else Status.REQUIRES_USER_INPUT)
            planned = self._job_plan(job)
            if planned is not None:  # the contract cannot be kept as it was: a re-plan is needed
                plan, i = planned
                self._mark(plan, i, "denied")
                self._set_plan_status(plan, "abandoned", f"step {i + 1} denied")
            mark_denied(self, call, words)
            what = action_words(call)
            if words:  # the person's words are a correction: the next step follows them
                self.owner.change("the person's words", lambda s: s.add_constraint(f"the person: {words}"))
                reply = f"Understood: {what} was not run. Next: {words}"
            else:
                reply = f"Understood: {what} was not run. What should I do instead?"
        else:
            self._transition(Step.EXECUTION, f"approved: job {job['job_id']}", "outcome")
            first = await self.runner.run_approved(job["job_id"], call)
            self._emit_outcome(first)
            planned = self._job_plan(job)
            if first.status == "pending":  # the file changed since it was asked: asked again
                self.chunks.notice("approval_stale", first.content, job_id=first.job_id)
                outcomes = [first]
                self._park(first, queue, plan=(planned[0].plan_id, planned[1]) if planned else None)
            elif planned is not None:
                plan, i = planned
                self._mark(plan, i, "done" if first.status == "ok" else "failed")
                d = MainDecision(rationale=f"continue plan {plan.plan_id}", goal_consistency="yes",
                                 constraint_check="yes", next_step="continue", step="EXECUTION")
                if first.status == "ok":
                    outcomes = await self._execute_plan(plan, d, prior=[first])
                else:
                    self._set_plan_status(plan, "failed", first.line(100))
                    outcomes = [first]
                    self._after_execution(outcomes)
            elif first.status == "ok" and queue:
                d = MainDecision(rationale="continue the approved plan", goal_consistency="yes",
                                 constraint_check="yes", next_step="continue", step="EXECUTION")
                outcomes = await self._run_calls(queue, d, prior=[first])
            else:
                outcomes = [first]
                self._after_execution(outcomes)
            reply = outcome_text(self.state, outcomes)
        self.owner.change("exchange", lambda s: s.add_exchange("(approval: " + ("yes)" if granted else "no)"), reply))
        self._reply(reply)
        goes_on = granted or self.state.status == Status.IN_PROGRESS
        return self._result(reply, None, outcomes, "continue" if goes_on else "pending_user")
