"""Approvals inside the engine: a run pauses before a tool that needs a person, and resumes with the answer.

An `Agent(..., ask_approval=True)` does not run a call of a tool whose `needs_approval` is true
(anything but reading, from `Tool.kind`, said where the tool is defined; a tool that did not
say counts as needing it). The run stops before that turn's calls: each waiting call goes out
as an `approval` chunk (phase `request`, its call id as the job id) and is a `PendingCall` in
`RunResult.pending`, and the run's `done` chunk says `ending="approval"`; the turn's messages
are kept in the session. `agent.resume(result, {call_id: True | False | Approval})` runs that
turn's calls — an approved one with its `ToolContext.approval`, a denied one answered "the
person said no", one that needed no approval as it would have — and the model goes on, as
openai-agents' interruptions and pydantic-ai's deferred tool calls do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from duckflow.core.chunks import ApprovalChunk, ApprovalData
from duckflow.core.results import PendingCall
from duckflow.core.run import RunContext
from duckflow.core.tool_runner import run_tool_calls
from duckflow.core.tools import Approval, Tool
from duckflow.errors import UserError
from duckflow.llm.types import ToolCall, ToolResult

DENIED = "not run: the person said no to this call; do not try it again without asking"


@dataclass(frozen=True)
class Resume:
    """A resumed run's input: the paused turn's calls and the answers to its waiting ones."""

    pending: tuple[PendingCall, ...]
    answers: Mapping[str, bool | Approval]


def waiting(calls: Sequence[ToolCall], tools: Mapping[str, Tool]) -> list[PendingCall]:
    """The turn's calls as PendingCalls when any of them needs a person's answer, else []."""
    pending = []
    for call in calls:
        tool = tools.get(call.name)
        pending.append(PendingCall(call, tool.kind if tool else "other",
                                   bool(tool is not None and tool.needs_approval and call.executable)))
    return pending if any(p.needs_approval for p in pending) else []


def ask(run: RunContext, agent: str, pending: Sequence[PendingCall]) -> None:
    """One `approval` request chunk per waiting call."""
    for p in pending:
        if p.needs_approval:
            run.emit(ApprovalChunk(agent=agent, data=ApprovalData(
                phase="request", job_id=p.id, call=p.call.to_dict(),
                request={"intent": f"{p.call.name} ({p.kind})", "kind": p.kind, "tool": p.call.name})))


def check_answers(resume: Resume) -> None:
    """Every waiting call needs its answer (a UserError names the missing ones)."""
    missing = [p.id for p in resume.pending if p.needs_approval and p.id not in resume.answers]
    if missing:
        raise UserError(f"no answer for the waiting call(s) {', '.join(missing)}",
                        hint="answer each call id of result.pending with True, False or an Approval")


async def answered(run: RunContext, agent: str, resume: Resume, tools: Mapping[str, Tool]) -> list[ToolResult]:
    """The paused turn's calls, in order: run when approved (or when they needed no approval),
    answered with `DENIED` when the person said no."""
    results: list[ToolResult] = []
    for p in resume.pending:
        approval = None
        if p.needs_approval:
            given = resume.answers[p.id]
            approval = given if isinstance(given, Approval) else Approval(granted=bool(given), by="person")
            run.emit(ApprovalChunk(agent=agent, data=ApprovalData(
                phase="answer", job_id=p.id, granted=approval.granted, by=approval.by or "person")))
            if not approval.granted:
                results.append(ToolResult(p.id, p.call.name, DENIED, is_error=True))
                continue
        results += await run_tool_calls(run, [p.call], tools, max_parallel=1, approval=approval)
    return results
