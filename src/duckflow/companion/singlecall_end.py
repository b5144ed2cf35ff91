"""How a single-call task ends: DONE only when its last check passed (or nothing needed one).

A reply saying `~ next: DONE` is a claim. A step whose command failed, or whose edit did not
apply, is not done. When the model says DONE and code changed with nothing proving it, the
loop runs a check itself (tests importing the module, or the script) or asks the model once
for a call of its function; a failed check goes back to the model with its error, at most
`checks.MAX_FIXES` times; when nothing could check the change, the task waits for the person
("not checked": they may accept it as it is). The final reply says which (`checks.ending`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

from duckflow.companion import checks, nextcheck, quietimport
from duckflow.companion.decision import MainDecision
from duckflow.companion.runresult import failed_run
from duckflow.companion.state import Status, Step
from duckflow.companion.taskchecks import asks_change
from duckflow.llm.types import ToolCall

if TYPE_CHECKING:
    from duckflow.companion.host import TurnHost
    from duckflow.companion.turnctx import TurnResult

Verdict = Literal["done", "continue", "stopped"]
ACCEPT = re.compile(r"^\s*(done|accept(ed)?|ok(ay)?|yes|looks good|it'?s fine|keep it|lgtm|"
                    r"それでいい|いいよ|OK|完了)\W*\s*$", re.I)


def step_failed(outcomes: list[Any]) -> bool:
    ran = [o for o in outcomes if o.status in ("ok", "error", "refused")]
    return any(o.status != "ok" for o in ran) or any(failed_run(o.content) for o in ran if o.status == "ok")


def conclude(session: TurnHost, files: list[str]) -> Verdict:
    """The model said DONE and nothing of this step failed: finish, check first, or stop."""
    log = checks.log_of(session)
    if not checks.did_something(log):
        return "continue"  # nothing was done for the task: a DONE alone ends nothing
    if not log.written and asks_change(log.task):  # a fix that changed nothing is not done,
        log.unchanged += 1  # however well the unchanged code runs: asked once more, then said so
        if log.unchanged > 1:
            return _stop(session, "nothing was changed, and the task asks for a change")
        return "continue"
    if checks.needs_check(log):
        if log.passed is False:
            if log.fixes >= checks.MAX_FIXES:
                return _stop(session, f"{log.last} (after {log.fixes} fixes)")
            return "continue"  # the next step shows the model the error to fix
        if log.bad_call:  # its check call did not fit the function: the next step calls it again
            return "continue"
        cmd = nextcheck.auto_command(session, log, files)
        if cmd is not None and cmd not in log.auto_tried:
            log.auto_tried.add(cmd)
            session.turn.check_next = cmd
            return "continue"
        if nextcheck.argument_scripts(session, log) and log.asked_call < 1:
            log.asked_call += 1
            session.turn.ask_run = True  # run with sample arguments
            return "continue"
        if nextcheck.call_targets(log) and log.asked_call < 1:
            log.asked_call += 1
            session.turn.ask_call = True
            return "continue"
        return _stop(session, checks.ending(log), unchecked=True)
    for quiet in quietimport.commands(session, log.task):  # importing it must print nothing: seen,
        if quiet not in log.quiet_seen and quiet not in log.auto_tried:  # (and still runs as a script)
            log.auto_tried.add(quiet)
            session.turn.check_next = quiet
            return "continue"
    owed = nextcheck.expectation_command(session, log)  # the task names what to compare, and no check
    if owed is not None and owed not in log.met_by and owed not in log.auto_tried:  # has compared it yet:
        log.auto_tried.add(owed)  # its own check runs before the task may end
        session.turn.check_next = owed
        return "continue"
    state = session.state
    if state.step == Step.EXECUTION:
        session._transition(Step.REVIEW, "single-call: the actions ran", "outcome", Status.SUCCESS)
    if state.step == Step.PLANNING:  # (after a recovery: the check that followed passed)
        session._transition(Step.REVIEW, "single-call: the result is checked", "outcome", Status.SUCCESS)
    rec = session._transition(Step.DONE, f"single-call: {checks.ending(log)}", "outcome", Status.SUCCESS)
    return "done" if rec.allowed else "continue"


def accept(session: TurnHost) -> bool:
    """The person accepts the result as it is (a change nobody checked, or a failed check)."""
    log = checks.log_of(session)
    log.last, log.passed, log.changed = "accepted by the person as it is (not checked)", True, []
    return conclude(session, []) == "done"


def _stop(session: TurnHost, why: str, *, unchecked: bool = False) -> Verdict:
    nxt = ("Say \"done\" to accept it as it is, or tell me how to check it." if unchecked
           else "Say what to change, or \"done\" to accept it as it is.")
    session.owner.set_status(Status.REQUIRES_USER_INPUT, why[:200])
    session.turn.stopped_text = f"Not done — {why}. {nxt}"
    return "stopped"


def ending_line(session: TurnHost) -> str:
    return checks.ending(checks.log_of(session))


def finished_line(session: TurnHost) -> str:
    """The ending of a finished task: "Done — checked: …" only when the task's expectation was met,
    else "Finished, not verified — ran X, it printed Y"."""
    from duckflow.companion.expect import result_of

    return result_of(checks.log_of(session), True, "").said


def _files(session: TurnHost) -> list[str]:
    from duckflow.companion.shownfiles import workspace_files

    return workspace_files(session.runner.root)


async def run_check(session: TurnHost, command: str) -> TurnResult:
    """Run the check the loop chose (through the gate, as any run) and go on from its result."""
    d = MainDecision(rationale=f"check the result: {command}", goal_consistency="yes", constraint_check="yes",
                     next_step="continue", step="EXECUTION", prompt_pattern="base_main_specialized")
    session.chunks.notice("check", f"checking the result: {command}")
    if session.state.step != Step.EXECUTION:
        session._transition(Step.EXECUTION, "single-call: check the result", "outcome")
    call = ToolCall(name="execute_shell", arguments={"command": command}, id=f"check-{len(command)}")
    outcomes = await session._run_calls([call], d)
    if session.state.pending_gate:
        session.turn.then_done = True
        verdict: Verdict = "continue"
    elif step_failed(outcomes):
        verdict = "continue"
    else:
        verdict = conclude(session, _files(session))
    return await after_verdict(session, verdict, outcomes, d)


def no_action(session: TurnHost) -> Verdict:
    """A reply that neither acted nor said DONE, with nothing changed: not finished."""
    if session.state.step == Step.EXECUTION:
        session._transition(Step.REVIEW, "single-call: the reply ran no action", "outcome", Status.SUCCESS)
    return "continue"


async def after_verdict(session: TurnHost, verdict: Verdict, outcomes: list[Any],
                         d: MainDecision | None, thought: str = "", user_text: str | None = None) -> TurnResult:
    from duckflow.companion.reply import outcome_text

    state = session.state
    if verdict == "done":
        return ended(session, outcomes, d, user_text)
    text = outcome_text(state, outcomes) if outcomes else thought
    if verdict == "stopped":
        text = session.turn.take_stopped_text()
    session.owner.change("exchange", lambda s: s.add_exchange(user_text or "(continued)", text or "(no reply)"))
    session._reply(text)
    nxt = "pending_user" if state.status == Status.REQUIRES_USER_INPUT or verdict == "stopped" else "continue"
    return session._result(text, d, outcomes, nxt)


def ended(session: TurnHost, outcomes: list[Any], d: MainDecision | None = None,
           user_text: str | None = None) -> TurnResult:
    from duckflow.companion.reply import outcome_text

    state = session.state
    head = outcome_text(state, outcomes) + "\n" if outcomes else ""
    text = head + finished_line(session)
    session.owner.change("exchange", lambda s: s.add_exchange(user_text or "(continued)", text))
    session._reply(text)
    return session._result(text, d, outcomes, "done")


def answered(session: TurnHost, text: str, d: MainDecision | None, user_text: str | None) -> TurnResult:
    """A task that only asks (nothing to change or run), answered from the files shown: done."""
    for step in (Step.REVIEW, Step.DONE):
        if session.state.step != step:
            session._transition(step, "single-call: the question is answered", "outcome", Status.SUCCESS)
    session.owner.change("exchange", lambda s: s.add_exchange(user_text or "(continued)", text))
    session._reply(text)
    return session._result(text, d, [], "done")
