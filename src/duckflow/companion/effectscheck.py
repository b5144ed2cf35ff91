"""The effects check around every auto-approved command: box it, list every lasting effect, keep only what is covered, ask.

An auto-approved `execute_shell` or `run_tests` (a new script, the test suite, `git diff`) runs
in the box the machine has (workspace/box.py):
- bubblewrap: on a copy-on-write overlay of the workspace (workspace/staging.py). The command
  never writes the workspace; afterwards every lasting effect is read from the staging area
  and listed with the result, what the approval covers is applied file by file, and the rest
  (a change to an existing file, anything protected or that would run later) is not applied
  and becomes an approval question (a new gate job, hard-required: never auto-approved).
- Landlock or Seatbelt, or no box (then only read-only commands get here): between
  `Watch.start` and `Watch.finish` (workspace/effects.py); the box keeps the workspace
  read-only, and whatever the comparison still finds deleted, overwritten or chmod-ed is
  restored file by file and asked about the same way.

What a command did to the task's tests (companion/testguard.py) is never applied nor asked
about: the outcome is refused, with the reason for the model.

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
    from duckflow.workspace.box import backend
    from duckflow.workspace.effects import Watch

    box = backend(runner.sandbox)
    if box == "bwrap":
        return await _run_staged(runner, call, approval, make)
    try:  # off the event loop: a server's other sessions go on while the workspace is scanned
        watch = await asyncio.to_thread(Watch.start, runner.root, covered(runner))
    except Exception as exc:  # fail closed: no snapshot, no unasked run
        return make(call, "refused", f"not run: the effects check could not take a snapshot "
                           f"of the workspace ({type(exc).__name__}: {exc})")
    staging = ""
    try:
        if box is not None:  # Landlock / Seatbelt: the covered files are the only writable ones
            staging = await asyncio.to_thread(_box_folder, runner)
        done = await runner.run(call, approved=False, approval=approval, staging=staging)
    finally:
        fx = await asyncio.to_thread(watch.finish)
        if staging:
            import shutil

            shutil.rmtree(staging, ignore_errors=True)
    runner.created.update(fx.created)
    if not fx.changed:
        return done
    return _ask(runner, call, fx, make)


def _box_folder(runner: ActionRunner) -> str:
    """A throwaway folder for a Landlock/Seatbelt run: its TMPDIR, and `covered` (the files the
    command may write, one a line)."""
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp(prefix="duckflow-box-"))
    (folder / "covered").write_text("".join(f"{p}\n" for p in covered(runner)), "utf-8")
    return str(folder)


async def _run_staged(runner: ActionRunner, call: ToolCall, approval: str,
                      make: Callable[..., CallOutcome]) -> CallOutcome:
    """Run on the staging overlay; list, apply what is covered, ask about the rest."""
    from duckflow.workspace.staging import Staging

    try:
        guarded = runner.guarded()  # the task's tests: what the command did to them is never applied
    except Exception as exc:  # fail closed
        return make(call, "refused", f"not run: the task's tests could not be kept before it ({exc})")
    try:
        st = await asyncio.to_thread(Staging, runner.root)
    except OSError as exc:  # fail closed
        return make(call, "refused", f"not run: the box's staging area could not be made ({exc})")
    try:
        done = await runner.run(call, approved=False, approval=approval, staging=str(st.dir))
        fx = await asyncio.to_thread(st.changes, tuple(covered(runner)))
        tests = [c for c in fx.changes if c.path in guarded]
        for c in tests:
            c.why = c.why or "the task's tests"
        await asyncio.to_thread(st.apply, fx)
        fx.diff = await asyncio.to_thread(st.diff, fx)
    finally:
        await asyncio.to_thread(st.close)
    runner.created.update(c.path for c in fx.kept if c.what == "created")
    done.content = _with_effects(done.content, fx.listing())
    if tests:  # not asked about: no approval makes them the model's to change
        return runner.kept_back(done, [c.path for c in tests], reached=False)
    if not fx.held:
        return done
    return _ask(runner, call, fx, make)


def _with_effects(content: str, lines: list[str]) -> str:
    """The command's result with its lasting effects listed (`effects`)."""
    import json

    if not lines:
        return content
    try:
        data = json.loads(content)
    except ValueError:
        return content + "\neffects: " + "; ".join(lines)
    if not isinstance(data, dict):
        return content + "\neffects: " + "; ".join(lines)
    data["effects"] = lines
    return json.dumps(data)


def _ask(runner: ActionRunner, call: ToolCall, fx: object, make: Callable[..., CallOutcome]) -> CallOutcome:
    """A new gate job for `call` that shows what it did (it waits for a person)."""
    from duckflow.gate.guarded import guarded_operation
    from duckflow.workspace.effects import Effects
    from duckflow.workspace.staging import BoxEffects

    assert isinstance(fx, Effects | BoxEffects)
    what = fx.summary()
    if isinstance(fx, BoxEffects):
        back = ("it ran in a box on a copy-on-write copy of the workspace: none of this reached "
                "the workspace")
        if fx.kept:
            back += f" (kept: {', '.join(c.path for c in fx.kept[:5])})"
    else:
        back = _restored(fx)
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


def _restored(fx: Any) -> str:
    """What the rollback did, as it happened (what could not be restored is said as such)."""
    back = ("nothing could be restored" if not fx.checkpoint else
            "rolled back from the checkpoint taken before it ran"
            + (f" (`duckflow undo {fx.saved_as}` puts the command's version back)" if fx.saved_as else ""))
    if fx.not_restored:
        back += f"; NOT restored: {', '.join(fx.not_restored[:5])}"
    return back
