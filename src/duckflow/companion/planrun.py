"""The plan as the contract of EXECUTION: a plan made from the Specialized reply, its reads, its actions run one by one.

PLANNING: the Specialized reply becomes a plan (`PlanTool.propose` + `set_action_specs`; a
plan that declares no action is refused — no fallback); its read calls run at once. When the
Main decision moves PLANNING → EXECUTION the plan is approved (`approve_plan`) and its
ActionSpecs drive EXECUTION one by one (`_execute_plan`): each spec's call goes through the
gate and core's tool runner and is marked done / failed (progress as `plan` chunks); a spec
without a concrete call asks the Specialized model for exactly that action, and a call that
does something the plan does not say is a deviation — not run, the task goes back to PLANNING
to re-plan. The base of `StepsMixin` (steps.py), which asks the model and runs the calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from duckflow.companion.actions import CallOutcome
from duckflow.companion.decision import MainDecision
from duckflow.companion.engine import MAIN_AGENT
from duckflow.companion.fivepoints import alternatives_in
from duckflow.companion.plan import Plan, PlanError, spec_matches, specs_for_calls
from duckflow.companion.state import Step
from duckflow.core.chunks import PlanChunk, PlanData
from duckflow.llm.types import ToolCall
from duckflow.toolkinds import READ_TOOLS

if TYPE_CHECKING:
    from duckflow.companion.actions import ActionRunner
    from duckflow.companion.chunkhub import ChunkHub
    from duckflow.companion.owner import StateOwner
    from duckflow.companion.state import Status
    from duckflow.companion.transitions import Source, TransitionRecord
    from duckflow.core.chunks import AnyChunk


class PlanRunMixin:
    if TYPE_CHECKING:  # provided by StepsMixin and CompanionSession
        owner: StateOwner
        runner: ActionRunner
        chunks: ChunkHub

        def _emit(self, chunk: AnyChunk) -> None: ...
        def _transition(self, to: Step, reason: str, source: Source,
                        status: Status | None = None) -> TransitionRecord: ...
        async def _ask_specialized(self, request: str, d: MainDecision) -> tuple[list[ToolCall], str] | None: ...
        def _emit_outcome(self, out: CallOutcome) -> None: ...
        def _after_execution(self, outcomes: list[CallOutcome], *, finish: bool = True) -> None: ...
        def _park(self, out: CallOutcome, rest: list[ToolCall], *, plan: tuple[str, int] | None = None) -> None: ...

    def _plan(self, text: str, calls: list[ToolCall]) -> str:
        """The one way a plan is made: propose + its ActionSpecs; no actions → PlanError."""
        plans = self.owner.plans
        specs = specs_for_calls(calls)
        if not specs:
            raise PlanError("the plan declares no actions (each step must be a tool call)",
                            hint="ask again, or say the steps yourself")
        plan_id = plans.propose(text or "(the model gave no plan text)")
        plans.set_action_specs(plan_id, specs)
        self.owner.change("plan", lambda s: setattr(s, "plan_id", plan_id))
        self._plan_chunk(plans.get(plan_id), text)
        return plan_id

    def _plan_chunk(self, plan: Plan, text: str = "") -> None:
        self._emit(PlanChunk(agent=MAIN_AGENT, data=PlanData(
            plan_id=plan.plan_id, status=plan.status, text=text,
            actions=[a.line() for a in plan.action_specs], states=[a.state for a in plan.action_specs])))

    def _mark(self, plan: Plan, index: int, state: str) -> None:
        self.owner.plans.mark(plan.plan_id, index, state)
        self.owner.change(f"plan {plan.plan_id} action {index + 1}: {state}", lambda s: None)

    def _set_plan_status(self, plan: Plan, status: str, why: str = "") -> None:
        self.owner.plans.set_status(plan.plan_id, status)
        self.owner.change(f"plan {plan.plan_id} {status}",
                          lambda s: s.log_decision(f"plan {plan.plan_id} {status}" + (f": {why}" if why else "")))
        self._plan_chunk(plan)

    async def _run_planning_reads(self, plan_id: str, d: MainDecision) -> list[CallOutcome]:
        """While planning only the reads run; each is marked in the plan."""
        plan = self.owner.plans.get(plan_id)
        reads = [(i, a) for i, a in enumerate(plan.action_specs) if a.kind == "read" and a.call is not None]
        outcomes: list[CallOutcome] = []
        for i, spec in reads:
            assert spec.call is not None
            out = await self.runner.process(ToolCall.from_dict(spec.call), intent=f"plan {plan_id}: {spec.description}",
                                            rationale=d.rationale)
            self._emit_outcome(out)
            outcomes.append(out)
            self.owner.plans.mark(plan_id, i, "done" if out.status == "ok" else "failed")
        self._after_execution(outcomes)
        return outcomes

    def approve_plan(self, why: str) -> Plan | None:
        """PLANNING → EXECUTION: the latest proposed plan becomes the contract."""
        plan = self.owner.plans.latest()
        if plan is None or plan.status != "proposed":
            return None
        if not plan.pending():
            self._set_plan_status(plan, "done", "nothing left to run")
            return None
        self._set_plan_status(plan, "approved", why)
        return plan

    async def _execute_plan(self, plan: Plan, d: MainDecision,
                            prior: list[CallOutcome] | None = None) -> list[CallOutcome]:
        """Run the plan's pending actions in order: each marked done/failed; stop at an approval."""
        outcomes: list[CallOutcome] = list(prior or [])
        if plan.status != "executing":
            self._set_plan_status(plan, "executing")
        for i in plan.pending():
            spec = plan.action_specs[i]
            call = ToolCall.from_dict(spec.call) if spec.call is not None else await self._call_for(plan, i, d)
            if call is None:
                return outcomes  # a deviation: back to PLANNING
            self._mark(plan, i, "running")
            self._plan_chunk(plan)
            out = await self.runner.process(call, intent=f"plan {plan.plan_id} step {i + 1}: {spec.description}",
                                            rationale=d.rationale, alternatives=alternatives_in(plan.content))
            outcomes.append(out)
            self._emit_outcome(out)
            if out.status == "pending":
                self._after_execution(outcomes, finish=False)
                self._park(out, [], plan=(plan.plan_id, i))
                return outcomes
            self._mark(plan, i, "done" if out.status == "ok" else "failed")
            if out.status != "ok":
                self._set_plan_status(plan, "failed", out.line(100))
                break
        else:
            self._set_plan_status(plan, "done")
        self._after_execution(outcomes)
        return outcomes

    async def _call_for(self, plan: Plan, index: int, d: MainDecision) -> ToolCall | None:
        """An action declared without a concrete call: the Specialized model gives exactly that one."""
        spec = plan.action_specs[index]
        got = await self._ask_specialized(f"Do step {index + 1} of plan {plan.plan_id}: {spec.line()}. "
                                          "Only this action.", d)
        calls = got[0] if got is not None else []
        wanted = [c for c in calls if spec_matches(spec, c)]
        other = [c for c in calls if not spec_matches(spec, c) and c.name not in READ_TOOLS]
        if other or not wanted:
            what = (f"{other[0].name} {other[0].arguments.get('path', '')}".strip() if other
                    else "no matching call")
            self._deviation(plan, f"{what} is not step {index + 1} of the plan ({spec.line()})")
            return None
        return wanted[0]

    def _deviation(self, plan: Plan, why: str) -> None:
        """Something outside the approved plan: not run; re-plan (focus drops: the task drifted)."""
        self.chunks.notice("deviation", f"not in plan {plan.plan_id}: {why}; re-planning first")
        self._set_plan_status(plan, "abandoned", f"deviation: {why}")
        self.owner.change("deviation", lambda s: s.vitals.drift())
        self._transition(Step.PLANNING, f"deviation from plan {plan.plan_id}: needs a re-plan", "outcome")

    def _job_plan(self, job: dict[str, Any]) -> tuple[Plan, int] | None:
        ref = job.get("plan")
        if not ref:
            return None
        try:
            return self.owner.plans.get(ref["plan_id"]), int(ref["index"])
        except (PlanError, KeyError, ValueError):
            return None
