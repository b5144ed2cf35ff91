"""Before a two-call task may end, its own check runs: the assertion written first, or the value, output or count the task names.

In the two-call turn the Main decision says DONE. A change that nothing compared with the task's
expectation would then end "Finished, not verified" at best — and a check the model chose, or
none, is no evidence. So when the decision moves to DONE after a change, and the task has an
expectation (`nextcheck.expectation_command`: the assertion the model wrote first, the call or
command the task writes out with its value, the count it asks for, the output it quotes) that no
check has met since that change, the loop runs it first, once per change, through the gate like
any run. Met: the task ends "Done — … as the task expects: …". Not met: it stays where it was,
the failed check is the next turn's evidence, and a DONE said over it ends "Not done — check
failed: …" (`expect.result_of`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from duckflow.companion import checks, nextcheck
from duckflow.llm.types import ToolCall

if TYPE_CHECKING:
    from duckflow.companion.actions import CallOutcome


def owed(session: Any) -> str | None:
    """The task's own check, when a change since its last run has not met it; else None."""
    log = checks.log_of(session)
    if not log.written or "execute_shell" not in session.runner.tool_names:
        return None
    command = nextcheck.expectation_command(session, log)  # (the tests passing does not meet the
    return command if command and command not in log.auto_tried | log.met_by else None  # value it names)


async def check_before_done(session: Any, d: Any) -> list[CallOutcome]:
    """Run the owed check (its outcomes; [] when none is owed). The caller stays out of DONE
    unless the check met the expectation."""
    command = owed(session)
    if command is None:
        return []
    checks.log_of(session).auto_tried.add(command)
    session.chunks.notice("check", f"checking the result: {command}")
    call = ToolCall(name="execute_shell", arguments={"command": command}, id=f"check-{len(command)}")
    outcomes: list[CallOutcome] = await session._run_calls([call], d)
    return outcomes
