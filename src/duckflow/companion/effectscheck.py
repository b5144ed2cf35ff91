"""The effects check around every auto-approved command: snapshot, run, compare, roll back, ask.

An auto-approved `execute_shell` or `run_tests` (a new script, the test suite, a model's own
test file) runs between `Watch.start` and `Watch.finish` (workspace/effects.py). With
bubblewrap the files outside what the approval covers are bound read-only, so the kernel
refuses a write, delete or rename at once; the comparison after the run is the second line
(the only one without a sandbox). Whatever it still finds deleted, overwritten or chmod-ed
outside the approval is restored from the checkpoint, and the call becomes an approval
question showing exactly those effects (a new gate job, hard-required: never auto-approved).

What the approval covers: files this session created (with write_file or an earlier checked
command). A scope limited to paths never auto-approves a command (it has no path), and `*` or
`--auto-approve-workspace` covers no existing file: a command's effects on files the session
did not create always go to a person.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from duckflow.llm.types import ToolCall
from duckflow.toolkinds import RUN_TOOLS

# the runner is companion/actions.ActionRunner and `make` its CallOutcome; both are passed in, so
# this module does not import actions.py back (no circle)
ActionRunner = Any
CallOutcome = Any

COMMAND_TOOLS = RUN_TOOLS


def covered(runner: ActionRunner) -> list[str]:
    """The paths an auto-approval lets a command change: the files this session created. (A
    scope limited to paths never auto-approves a command, gate/autoapprove.py, and `*` or
    `--auto-approve-workspace` covers no existing file.)"""
    return sorted(runner.created)


async def run_watched(runner: ActionRunner, call: ToolCall, approval: str,
                      make: Callable[..., CallOutcome]) -> CallOutcome:
    """Run an auto-approved command under the effects check (see the module docstring); `make`
    builds the outcome (actions.CallOutcome)."""
    from duckflow.workspace.effects import Watch

    try:  # off the event loop: a server's other sessions go on while the workspace is scanned
        watch = await asyncio.to_thread(Watch.start, runner.root, covered(runner))
    except Exception as exc:  # fail closed: no snapshot, no unasked run
        return make(call, "refused", f"not run: the effects check could not take a snapshot "
                           f"of the workspace ({type(exc).__name__}: {exc})")
    readonly: tuple[str, ...] = ()
    if not runner.plain():
        readonly = tuple(watch.readonly())
    try:
        done = await runner.run(call, approved=False, approval=approval, readonly=readonly)
    finally:
        fx = await asyncio.to_thread(watch.finish)
    runner.created.update(fx.created)
    if not fx.changed:
        return done
    return _ask(runner, call, fx, make)


def _ask(runner: ActionRunner, call: ToolCall, fx: object, make: Callable[..., CallOutcome]) -> CallOutcome:
    """A new gate job for `call` that shows what it did (it waits for a person)."""
    from duckflow.gate.guarded import guarded_operation
    from duckflow.workspace.effects import Effects

    assert isinstance(fx, Effects)
    what = fx.summary()
    back = ("nothing could be restored" if not fx.checkpoint else
            "rolled back from the checkpoint taken before it ran"
            + (f" (`duckflow undo {fx.saved_as}` puts the command's version back)" if fx.saved_as else ""))
    if fx.not_restored:
        back += f"; NOT restored: {', '.join(fx.not_restored[:5])}"
    op = guarded_operation(call.name, call.arguments, runner.guard())
    op = replace(op, destructive=f"when it ran unasked it {what}")
    command = call.arguments.get("command") or "the tests"
    try:
        outcome = runner.gate.submit(
            op, intent=f"run `{command}` again, with its effects", requested_by=runner.by,
            rationale=f"it ran under auto-approve and {what}; {back}",
            impact=f"it {what}", diff_preview=fx.diff or None, affected=fx.changed,
            summary=f"`{command}` {what}: allow it?")
    except Exception as exc:
        return make(call, "refused", f"it {what}; {back}; the approval gate failed "
                           f"({type(exc).__name__}: {exc})")
    request = outcome.request.to_dict() if outcome.request is not None else None
    return make(call, "pending" if outcome.decision == "pending" else "refused", f"it {what}, which the approval did not cover; {back}. "
                       "A person must decide whether it may do that.", outcome.job_id, request)
