"""The live side of a companion session: the chunk stream channels render, and what happens meanwhile.

`stream(text)` / `stream_answer(granted)` drive a task and yield its core Chunks (the one API
the CLI, the server, the web page and the chat channels use); cancelling the stream cancels
the step and keeps the state (`note_cancelled`). Corrections typed while a task runs reach it
at its next step (`add_correction`); low focus restates the goal (`_refocus`); a session's
one-line summary goes to the workspace's long-term memory (`note_session`). Mixed into
`CompanionSession`.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, cast

from duckflow.companion import vitals
from duckflow.companion.engine import MAIN_AGENT
from duckflow.companion.state import AgentState, Status, Step
from duckflow.core.chunks import AnyChunk, DoneChunk, DoneData

if TYPE_CHECKING:
    from duckflow.companion.chunkhub import ChunkHub
    from duckflow.companion.host import TurnHost
    from duckflow.companion.owner import StateOwner
    from duckflow.companion.plan import Plan
    from duckflow.companion.task import TaskOutcome
    from duckflow.companion.transitions import Source, TransitionRecord
    from duckflow.companion.turnctx import TurnContext, TurnResult

CONSTRAINT_WORDS = re.compile(r"\b(don't|do not|never|only|must|without|keep|use|avoid|no )|しないで|だけ|必ず|使って|禁止",
                              re.IGNORECASE)


class LiveMixin:
    if TYPE_CHECKING:  # provided by CompanionSession
        owner: StateOwner
        chunks: ChunkHub
        corrections: list[str]
        turn: TurnContext

        @property
        def state(self) -> AgentState: ...
        def _emit(self, chunk: AnyChunk) -> None: ...
        async def handle_message(self, text: str) -> TurnResult: ...
        async def continue_task(self, *, observed: bool) -> TurnResult: ...
        async def answer_approval(self, granted: bool, *, by: str = "user",
                                  note: str | None = None) -> TurnResult: ...
        def _transition(self, to: Step, reason: str, source: Source,
                        status: Status | None = None) -> TransitionRecord: ...
        def _set_plan_status(self, plan: Plan, status: str, why: str = "") -> None: ...

    # -- the stream channels render ---------------------------------------------------------
    async def stream(self, text: str, *, max_turns: int = 12,
                     auto_approve_workspace: bool = False) -> AsyncIterator[AnyChunk]:
        """A person's message, driven until the task needs them again, as core Chunks.

        Yields every chunk of the task in order (model text as `delta` while it is written,
        `decision`, `state`, `plan`, `tool_call`/`tool_response`, `approval`, `notice`,
        `progress`, `usage`, `reply` per turn) and ends with a `done` chunk whose `ending` says
        why it stopped (done | approval | input | no_progress | max_turns | blocked | error).
        `seq` continues the session's numbering. Closing the iterator cancels the task; the
        state is kept.
        """
        async for chunk in self._stream(lambda: self.handle_message(text), max_turns, auto_approve_workspace):
            yield chunk

    async def stream_answer(self, granted: bool, *, by: str = "user", note: str | None = None,
                            max_turns: int = 12, auto_approve_workspace: bool = False
                            ) -> AsyncIterator[AnyChunk]:
        """The person's answer to the pending approval, then the task goes on: as `stream()`."""
        async for chunk in self._stream(lambda: self.answer_approval(granted, by=by, note=note),
                                        max_turns, auto_approve_workspace):
            yield chunk

    async def stream_continue(self, *, max_turns: int = 12, auto_approve_workspace: bool = False
                              ) -> AsyncIterator[AnyChunk]:
        """Go on with a paused or interrupted task from its state (nothing is replayed): as `stream()`."""
        async for chunk in self._stream(lambda: self.continue_task(observed=True), max_turns,
                                        auto_approve_workspace):
            yield chunk

    async def _stream(self, first: Callable[[], Awaitable[TurnResult]], max_turns: int,
                      auto_approve_workspace: bool) -> AsyncIterator[AnyChunk]:
        from duckflow.companion.task import drive

        queue: asyncio.Queue[AnyChunk | None] = asyncio.Queue()
        unsubscribe = self.chunks.subscribe(queue.put_nowait)

        async def body() -> TaskOutcome:
            try:
                outcome = await drive(cast("TurnHost", self), first(), max_turns=max_turns,
                                      auto_approve_workspace=auto_approve_workspace)
                self._emit(DoneChunk(agent=MAIN_AGENT, data=DoneData(
                    text=outcome.message, turns=outcome.turns, ending=outcome.ending,
                    result=outcome.result.to_dict() if outcome.result else None)))
                return outcome
            except asyncio.CancelledError:
                self.note_cancelled()
                raise
            finally:
                queue.put_nowait(None)

        task = asyncio.create_task(body())
        try:
            while (chunk := await queue.get()) is not None:
                yield chunk
            await task
        finally:
            unsubscribe()
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            self.chunks.release_turn()  # the stream has them all; an idle session keeps none

    async def ask(self, text: str) -> str:
        """A question while a task runs: Main answers from the live state, read-only, in parallel.

        Its words stream as `delta` chunks of agent `companion.chat` (to every listener of the
        running `stream()`), then a `reply` chunk; nothing in the task moves."""
        from duckflow.companion.sidechat import answer_question

        return await answer_question(cast("TurnHost", self), text)

    def note_session(self) -> None:
        """One line about this session into the workspace's long-term memory (on close)."""
        s = self.state
        if not s.exchanges:
            return
        ending = "done" if s.step == Step.DONE else f"stopped at {s.step.value} ({s.status.value})"
        line = f"{time.strftime('%Y-%m-%d')} {s.task or s.goal or '-'} → {ending}"
        self.owner.change("session summary", lambda st: st.memory.note_session(st.session_id, line))

    def note_cancelled(self) -> None:
        """The current step was cancelled (Ctrl-C, Esc, Stop, /cancel, a closed stream): keep the
        state and say where; what the model had written so far joins the exchanges marked
        "(cancelled)" (the next turns see it), and the one-shot notes the step left for the next
        one (a check to run, a narrowed grammar, a stop's words) are dropped: the next message
        starts clean."""
        step = self.state.step.value
        partial = "".join(c.data.text for c in self.chunks.turn  # the step's prose (not its protocol text)
                          if c.type == "delta" and c.agent == MAIN_AGENT).strip()
        said = self.turn.said or "(continued)"
        self.turn.clear_one_shots()

        def note(s: AgentState) -> None:
            s.status = Status.REQUIRES_USER_INPUT
            s.log_decision(f"cancelled by the person during {step}")
            s.set_last_delta(f"task cancelled during {step}")
            s.add_exchange(said, (partial[:400] + " … (cancelled)") if partial else "(cancelled)")

        self.owner.change("cancelled", note)

    def note_interrupted(self, why: str) -> None:
        """The step stopped on a failure (a provider_error, say): saved as interrupted with the
        reason, never left IN_PROGRESS."""
        step = self.state.step.value
        why = " ".join(why.split())[:200]

        def note(s: AgentState) -> None:
            s.status = Status.REQUIRES_USER_INPUT
            s.log_decision(f"interrupted during {step}: {why}")
            s.set_last_delta(f"interrupted: {why}")

        self.owner.change("interrupted", note)

    def _refocus(self, message: str) -> None:
        """Low focus: say the goal again, drop an open plan, back to PLANNING; focus recovers."""
        self.chunks.notice("vitals", message)
        plan = self.owner.plans.latest()
        if plan is not None and plan.open:
            self._set_plan_status(plan, "abandoned", "focus low: re-planning from the goal")
        if self.state.step == Step.EXECUTION:  # the table's way back to planning
            self._transition(Step.PLANNING, "focus low: re-plan from the goal", "outcome")
        self.owner.change("refocused", vitals.refocus)

    def add_correction(self, text: str) -> None:
        """A correction or constraint typed during a task: applied at the task's next step."""
        text = text.strip()
        self.corrections.append(text)

        def note(s: AgentState) -> None:
            if CONSTRAINT_WORDS.search(text):
                s.add_constraint(text)
            s.log_decision(f"correction while working: {text}")

        self.owner.change("correction", note)
        self.chunks.notice("constraint", f"noted; the task takes it at its next step: {text}")

    def take_corrections(self) -> str | None:
        said, self.corrections = self.corrections, []
        return "\n".join(said) if said else None

