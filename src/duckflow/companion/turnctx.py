"""What one session's turns hand each other: a `TurnContext` between steps, a `TurnResult` per turn.

The loop's own notes between model calls live here, typed, instead of as loose attributes on
the session: the task's check log, the check the loop chose to run next, what the next step's
grammar is narrowed to, a repeated denied action, the words of a stop. Each note is read by the
step it is meant for, and `take` reads a one-shot note and clears it. Nothing here is saved: a
restart starts the notes again, the task state (`AgentState`) is what persists.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from duckflow.companion.actions import CallOutcome
from duckflow.companion.decision import MainDecision
from duckflow.companion.state import Status, Step
from duckflow.core.chunks import AnyChunk, StateChunk

if TYPE_CHECKING:
    from duckflow.companion.checks import CheckLog


@dataclass
class TurnContext:
    log: CheckLog | None = None  # changes and the checks of them, for the task (made on first use)
    repeats: int = 0  # a denied action proposed again, counted since the person last spoke
    ask_call: bool = False  # the next step is asked for a call of the function the task names
    ask_run: bool = False  # ... or for a run of the script with sample arguments
    run_only: str = ""  # the next step's grammar allows only this run
    check_next: str = ""  # a check the loop chose: run next, with no model call
    then_done: bool = False  # the step said DONE and its actions wait for an approval
    unusable: str = ""  # why the last reply could not be used, even after asking again
    stopped_text: str = ""  # the words of a stop, for the turn's reply
    edit_kind: tuple[str, str] | None = None  # (task, the edit example chosen at its first step)
    asked: list[tuple[str, list[str]]] = field(default_factory=list)  # the reply's questions for the person
    question: tuple[str, list[str]] | None = None  # the question asked and waiting, with its options
    said: str = ""  # the person's words that started the running turn (a cancelled one keeps them)

    def clear_one_shots(self) -> None:
        """A cancelled step: the notes it left for the next one go (the next message starts clean)."""
        self.ask_call = self.ask_run = self.then_done = False
        self.run_only = self.check_next = self.unusable = self.stopped_text = ""

    @property
    def checks(self) -> CheckLog:
        """The task's check log (companion/checks.py is loaded by the first turn that checks)."""
        if self.log is None:
            from duckflow.companion.checks import CheckLog

            self.log = CheckLog()
        return self.log

    def take_ask_call(self) -> bool:
        value, self.ask_call = self.ask_call, False
        return value

    def take_ask_run(self) -> bool:
        value, self.ask_run = self.ask_run, False
        return value

    def take_run_only(self) -> str:
        value, self.run_only = self.run_only, ""
        return value

    def take_check_next(self) -> str:
        value, self.check_next = self.check_next, ""
        return value

    def take_then_done(self) -> bool:
        value, self.then_done = self.then_done, False
        return value

    def take_unusable(self) -> str:
        value, self.unusable = self.unusable, ""
        return value

    def take_asked(self) -> list[tuple[str, list[str]]]:
        value, self.asked = self.asked, []
        return value

    def take_stopped_text(self) -> str:
        value, self.stopped_text = self.stopped_text, ""
        return value or "Not done."


@dataclass
class TurnResult:
    reply: str
    step: Step
    status: Status
    decision: MainDecision | None = None
    outcomes: list[CallOutcome] = field(default_factory=list)
    pending: dict[str, Any] | None = None
    chunks: list[AnyChunk] = field(default_factory=list)
    tokens: dict[str, int] = field(default_factory=dict)
    next_step: str = "pending_user"
    stopped: str | None = None  # why the task must stop here: token_budget | guardrail

    @property
    def ran_tools(self) -> bool:
        return any(o.status in ("ok", "error", "refused") for o in self.outcomes)

    @property
    def moved(self) -> bool:
        """A step change happened in this turn."""
        return any(isinstance(c, StateChunk) and c.data.allowed for c in self.chunks)
