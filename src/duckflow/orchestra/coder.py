"""The Coder → approval → Worker flow (seed 003 §5.1, §6.2): a Coder proposes, a person approves, the Worker applies.

1. `propose()`: the Coder (Coder1/2/3 by route) gets the task and the files it names, and answers
   CoderOutput JSON (job_id, plan, unified-diff patch, risk, need_approval, cost_hint). It never
   executes anything (coder.plan_generated).
2. The proposal goes through the gate as one write operation over the files of the patch, with
   the summary, impact (files), rollback (checkpoints / `duckflow undo`) and the diff; the gate
   answers pending (approval.requested), auto_approved (approval.auto_approved) or refused.
   The Coder's own `need_approval=false` is not trusted: the gate decides. The approval message
   carries the cost estimate (seed 003 §6.3): the tokens the proposal took (every attempt) — the
   Worker applies the patch without a model, so that is the job's whole model cost — and the
   Coder's own `cost_hint` when it gave one.
3. `decide(job_id, granted, approver)` records approval.granted / approval.denied; `apply()` is the
   Worker applying the patch through the workspace (guard, checkpoints, the hunk-matching ladder)
   and reporting (worker.success / worker.fail).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from duckflow.orchestra.contracts import CoderOutput, read_coder_output
from duckflow.orchestra.patch import PatchError, parse_unified_diff
from duckflow.orchestra.roles import Roles, RoleUnavailable, error_text, prompt, role_for_route

_PATHLIKE = re.compile(r"(?<![\w/.-])([\w.-]+(?:/[\w.-]+)*\.[A-Za-z0-9]{1,8})(?![\w/])")
MAX_CONTEXT_BYTES = 60_000


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass
class Proposal:
    """What `propose()` produced: the job (pending / auto_approved / refused / failed) and the report."""

    status: str
    message: str
    job_id: str | None = None
    coder_output: CoderOutput | None = None
    files: list[str] = field(default_factory=list)
    applied: dict[str, Any] | None = None


def cost_text(prompt_tokens: int, completion_tokens: int, hint: str | None) -> str:
    """The approval message's cost estimate: tokens spent on the proposal, and the Coder's hint."""
    parts = []
    if prompt_tokens or completion_tokens:
        parts.append(f"{prompt_tokens + completion_tokens:,} tokens to propose it ({prompt_tokens:,} in, "
                     f"{completion_tokens:,} out); applying it needs no model")
    if hint:
        parts.append(f"the Coder's estimate: {hint}")
    return "; ".join(parts)


_DOLLARS = re.compile(r"(?:\$|US\$|USD\s*)\s*(\d[\d,]*(?:\.\d+)?)|(\d[\d,]*(?:\.\d+)?)\s*(?:USD|dollars?|\$)",
                      re.I)


def hint_dollars(hint: str | None) -> float | None:
    """The dollars a Coder's cost hint names (`$50`, `about 12.5 USD`, `3 dollars`): the largest
    one, so a range is judged by its top; None when it names no amount in dollars."""
    found = [float((a or b).replace(",", "")) for a, b in _DOLLARS.findall(hint or "")]
    return max(found) if found else None


def _summary(out: CoderOutput) -> dict[str, Any]:
    return {"plan": out.plan[:500], "risk": out.risk[:200], "patch_lines": out.patch.count("\n") + 1,
            "coder_job_id": out.job_id, "cost_hint": out.cost_hint}


class CoderFlow:
    def __init__(self, roles: Roles, *, workspace: Path, gate: Any, state: Any, emit: Any,
                 default_coder: str = "CODE1") -> None:
        self.roles = roles
        self.workspace = Path(workspace)
        self.gate = gate
        self.state = state
        self.emit = emit
        self.default_coder = default_coder

    def _context(self, task: str) -> str:
        """The files the task names (inside the workspace only), for the Coder to diff against."""
        from duckflow.workspace.files import Workspace

        ws = Workspace.open(self.workspace)
        parts: list[str] = []
        used = 0
        for name in dict.fromkeys(_PATHLIKE.findall(task)):
            try:
                text = ws.read_file(name)
            except Exception:  # noqa: BLE001 - a name that is not a readable workspace file is just text
                continue
            if used + len(text) > MAX_CONTEXT_BYTES:
                break
            used += len(text)
            parts.append(f"=== {name} ===\n{text}")
        return "\n\n".join(parts)

    async def propose(self, route: str, task: str, *, session_id: str, channel: str, local_only: bool) -> Proposal:
        role = role_for_route(route, self.default_coder)
        try:
            agent = self.roles.agent(role, route=route, local_only=local_only,
                                     instructions=prompt("coder", alias=self.roles.alias(role)))
            await self.roles.ready(role)
        except RoleUnavailable as exc:
            self.emit("worker.fail", session_id, initial_route=route, final_route=route, error_reason=exc.message)
            return Proposal("failed", f"{exc.message}" + (f" ({exc.hint})" if exc.hint else ""))
        context = self._context(task)
        message = f"Task: {task}\n\nWorkspace files:\n{context or '(none named in the task)'}"
        out: CoderOutput | None = None
        error = ""
        spent = [0, 0]  # prompt, completion tokens over every attempt
        for _ in range(1 + self.roles.retries(role)):
            result = await agent.run(message, raise_errors=False)
            spent[0] += result.usage.prompt_tokens
            spent[1] += result.usage.completion_tokens
            if not result.ok:
                error = f"coder call failed: {error_text(result.error)}"
                continue
            out = read_coder_output(result.text)
            if out is not None:
                try:
                    files = parse_unified_diff(out.patch)
                except PatchError as exc:
                    error, out = f"the patch is not a usable unified diff: {exc}", None
                    continue
                break
            error = "its reply was not a proposal with a plan and a patch"
        if out is None:
            self.emit("worker.fail", session_id, initial_route=route, final_route=route, error_reason=error)
            return Proposal("failed", f"The Coder could not propose a change: {error}. Nothing was changed; "
                                      "ask again, or name another Coder (/code1, /code2, /code3).")
        self.emit("coder.plan_generated", session_id, initial_route=route, final_route=route,
                  risk=out.risk_level, coder_output=_summary(out), coder=self.roles.alias(role))
        return self._submit(out, [f.path for f in files], route=route, session_id=session_id, channel=channel,
                            cost=cost_text(spent[0], spent[1], out.cost_hint))

    def _submit(self, out: CoderOutput, files: list[str], *, route: str, session_id: str, channel: str,
                cost: str = "") -> Proposal:
        from duckflow.gate import guarded_operation
        from duckflow.workspace.guard import WorkspaceGuard

        # the guard's verdicts (refusals, symlink targets, dangerous extensions) and the binding
        # to this workspace and each file's content now (gate/binding.py) go with the job
        # the estimate in dollars is judged against gate.cost_limit: over it, a person must decide
        op = guarded_operation("apply_patch", {}, WorkspaceGuard(self.workspace), kind="write",
                               paths=tuple(files), size=len(out.patch.encode()), diff=out.patch,
                               task_type="code", cost_estimate=hint_dollars(out.cost_hint))
        first = out.plan.strip().splitlines()[0] if out.plan.strip() else "apply the Coder's patch"
        outcome = self.gate.submit(
            op, intent=first[:200], rationale=out.plan[:2000],
            impact=f"files: {', '.join(files)}" + (f" · cost: {cost}" if cost else ""),
            alternatives="say no, and nothing changes", diff_preview=out.patch, summary=first[:300], affected=files,
            reversible=True, rollback="each file is checkpointed: `duckflow undo` restores it",
            requested_by=f"orchestra:{self.roles.alias(role_for_route(route, self.default_coder))}")
        job_id = outcome.job_id or out.job_id
        requested_at = _now()
        self.state.save_job(job_id, session_id=session_id, channel=channel, route=route,
                            workspace=str(self.workspace), proposal=out.model_dump(),
                            status=outcome.decision)
        common = {"job_id": job_id, "approval_requested_at": requested_at, "coder_output": _summary(out),
                  "initial_route": route, "final_route": route, "risk": out.risk_level, "cost_estimate": cost}
        self.emit("approval.requested", session_id, approval_status="pending", **common)
        proposal = Proposal(outcome.decision, "", job_id, out, files)
        if outcome.decision == "auto_approved":
            self.emit("approval.auto_approved", session_id, approval_status="auto_approved",
                      approval_decided_at=_now(), approver="auto-approve", **common)
            proposal.applied = self.apply(job_id, session_id=session_id)
            proposal.message = self._applied_text(proposal.applied)
        elif outcome.decision == "refused":
            self.emit("approval.denied", session_id, approval_status="denied", approval_decided_at=_now(),
                      approver="gate:policy", reason=outcome.reason, **common)
            proposal.message = f"The gate refused job {job_id}: {outcome.reason}"
        else:
            proposal.message = (f"Job {job_id} waits for your approval: {first}\n"
                                f"files: {', '.join(files)} · risk {out.risk_level} · reversible (duckflow undo)"
                                + (f"\ncost: {cost}" if cost else ""))
        return proposal

    def decide(self, job_id: str, granted: bool, *, approver: str, session_id: str) -> dict[str, Any]:
        """A person's answer: record it in the gate and the event log; on a grant the Worker applies."""
        job = self.state.job(job_id)
        if job is None:
            from duckflow.errors import DuckflowError

            raise DuckflowError(f"no orchestra job {job_id}", hint="duckflow events --type approval.requested")
        try:
            self.gate.decide(job_id, granted, approver)
        except Exception as exc:  # noqa: BLE001 - already decided elsewhere (e.g. duckflow approvals)
            current = self.gate.get(job_id)
            decision = getattr(current, "decision", None)
            if decision is None or getattr(decision, "granted", None) != granted:
                raise exc
        kind = "approval.granted" if granted else "approval.denied"
        self.emit(kind, session_id, job_id=job_id, approval_status="granted" if granted else "denied",
                  approval_decided_at=_now(), approver=approver, initial_route=job["route"],
                  final_route=job["route"])
        if not granted:
            self.state.set_job_status(job_id, "denied")
            return {"ok": False, "denied": True, "job_id": job_id}
        return self.apply(job_id, session_id=session_id)

    def auto_approve(self, job_id: str, *, by: str, session_id: str) -> dict[str, Any] | str:
        """A run-scoped auto-approve (`duckflow run --auto-approve-workspace`): recorded by the gate as
        auto_approved (never as a person) when nothing makes the job hard-required; then the Worker
        applies. Returns why not, as text, when the job stays pending."""
        from duckflow.gate import AutoApproveScope

        job = self.state.job(job_id)
        if job is None:
            return f"no orchestra job {job_id}"
        answered = self.gate.auto_answer(job_id, AutoApproveScope.workspace(), by=by)
        if isinstance(answered, str):
            return answered
        self.emit("approval.auto_approved", session_id, job_id=job_id, approval_status="auto_approved",
                  approval_decided_at=_now(), approver=f"auto:{by}", initial_route=job["route"],
                  final_route=job["route"])
        return self.apply(job_id, session_id=session_id)

    def apply(self, job_id: str, *, session_id: str) -> dict[str, Any]:
        """The Worker applies an approved patch (guard, checkpoints, the hunk-matching ladder)."""
        from duckflow.gate.binding import stale
        from duckflow.workspace.files import Workspace

        job = self.state.job(job_id)
        assert job is not None
        patch = str(job["proposal"]["patch"])
        ws = Workspace.open(job["workspace"])
        done: list[dict[str, Any]] = []
        failed: list[str] = []
        gate_job = self.gate.get(job_id)
        person = gate_job.status == "granted"  # an auto-approval never unlocks what needs a person
        found = stale(ws.root, ws.guard, gate_job.request.operation.extra)
        if found is not None or gate_job.status not in ("granted", "auto_approved"):
            why = found[1] if found else f"the gate's job is {gate_job.status}"
            reason = f"not applied: {why}; ask for the change again"
            report: dict[str, Any] = {"ok": False, "job_id": job_id, "changed": [], "checkpoints": [],
                                      "failed": [reason]}
            self.state.set_job_status(job_id, "failed", str(report))
            self.emit("worker.fail", session_id, job_id=job_id, initial_route=job["route"],
                      final_route=job["route"], worker_calls=0, needs_next_loop=False,
                      error_reason=reason, changed=[])
            return report
        for fp in parse_unified_diff(patch):
            try:
                if fp.deleted:
                    failed.append(f"{fp.path}: deleting files is not applied from a patch (ask for it explicitly)")
                elif fp.created:
                    done.append(ws.write_file(fp.path, fp.new_content(), approved=person, tool="apply_patch"))
                else:
                    done.append(ws.edit_file(fp.path, fp.edit_blocks(), approved=person))
            except Exception as exc:  # noqa: BLE001 - reported per file; nothing else is touched
                failed.append(f"{fp.path}: {getattr(exc, 'message', exc)}")
        ok = not failed
        report = {"ok": ok, "job_id": job_id, "changed": [d["path"] for d in done],
                  "checkpoints": [d.get("checkpoint") for d in done], "failed": failed}
        self.state.set_job_status(job_id, "applied" if ok else "failed", str(report))
        kind = "worker.success" if ok else "worker.fail"
        self.emit(kind, session_id, job_id=job_id, initial_route=job["route"], final_route=job["route"],
                  worker_calls=1, needs_next_loop=False, error_reason="; ".join(failed) or None,
                  changed=report["changed"])
        return report

    @staticmethod
    def _applied_text(report: dict[str, Any] | None) -> str:
        if not report:
            return ""
        job = str(report["job_id"])[:8]
        if report.get("denied"):
            return f"Job {job} denied: nothing changed."
        changed = ", ".join(report["changed"]) or "nothing"
        text = f"Applied job {job}: changed {changed}."
        if report["failed"]:
            text += " Not applied: " + "; ".join(report["failed"])
        return text + (" It can be undone (/undo)." if report["changed"] else "")
