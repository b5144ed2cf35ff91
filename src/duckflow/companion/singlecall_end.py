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

from duckflow.companion import checks
from duckflow.companion.state import Status, Step

if TYPE_CHECKING:
    from duckflow.companion.session import CompanionSession

Verdict = Literal["done", "continue", "stopped"]
ACCEPT = re.compile(r"^\s*(done|accept(ed)?|ok(ay)?|yes|looks good|it'?s fine|keep it|lgtm|"
                    r"それでいい|いいよ|OK|完了)\W*\s*$", re.I)


def failed_run(content: str) -> bool:
    """A command result (JSON from execute_shell / run_tests, or its evidence line
    `… → ok: exit N; …`) that exited non-zero or timed out."""
    if re.search(r"→ \w+: (exit (-?[1-9]|None)|timed out)\b", content):
        return True
    if '"exit_code"' not in content:
        return False
    code, _, _ = checks.run_result(content)
    return code != 0


def step_failed(outcomes: list[Any]) -> bool:
    ran = [o for o in outcomes if o.status in ("ok", "error", "refused")]
    return any(o.status != "ok" for o in ran) or any(failed_run(o.content) for o in ran if o.status == "ok")


def conclude(session: CompanionSession, files: list[str]) -> Verdict:
    """The model said DONE and nothing of this step failed: finish, check first, or stop."""
    log = checks.log_of(session)
    if not checks.did_something(log):
        return "continue"  # nothing was done for the task: a DONE alone ends nothing
    if checks.needs_check(log):
        if log.passed is False:
            if log.fixes >= checks.MAX_FIXES:
                return _stop(session, f"{log.last} (after {log.fixes} fixes)")
            return "continue"  # the next step shows the model the error to fix
        cmd = checks.auto_command(session, log, files)
        if cmd is not None and cmd not in log.auto_tried:
            log.auto_tried.add(cmd)
            session.__dict__["_check_next"] = cmd
            return "continue"
        if checks.call_targets(log) and log.asked_call < 1:
            log.asked_call += 1
            session.__dict__["_ask_call"] = True
            return "continue"
        return _stop(session, checks.ending(log), unchecked=True)
    state = session.state
    if state.step == Step.EXECUTION:
        session._transition(Step.REVIEW, "single-call: the actions ran", "outcome", Status.SUCCESS)
    if state.step == Step.PLANNING:  # (after a recovery: the check that followed passed)
        session._transition(Step.REVIEW, "single-call: the result is checked", "outcome", Status.SUCCESS)
    rec = session._transition(Step.DONE, f"single-call: {checks.ending(log)}", "outcome", Status.SUCCESS)
    return "done" if rec.allowed else "continue"


def accept(session: CompanionSession) -> bool:
    """The person accepts the result as it is (a change nobody checked, or a failed check)."""
    log = checks.log_of(session)
    log.last, log.passed, log.changed = "accepted by the person as it is (not checked)", True, []
    return conclude(session, []) == "done"


def _stop(session: CompanionSession, why: str, *, unchecked: bool = False) -> Verdict:
    nxt = ("Say \"done\" to accept it as it is, or tell me how to check it." if unchecked
           else "Say what to change, or \"done\" to accept it as it is.")
    session.owner.set_status(Status.REQUIRES_USER_INPUT, why[:200])
    session.__dict__["_stopped_text"] = f"Not done — {why}. {nxt}"
    return "stopped"


def ending_line(session: CompanionSession) -> str:
    return checks.ending(checks.log_of(session))
