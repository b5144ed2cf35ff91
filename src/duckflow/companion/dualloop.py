"""The dual loop (seed 001 §4.4): a chat side that keeps answering while a task side works.

Both sides share one `StateOwner` (the single source of truth). The task side is an asyncio
task running `task.drive`. The chat side acts at once on what is typed meanwhile
(`interject`, sorted by `sidechat.classify`): a question is answered by the Main layer in
parallel, read-only; a correction or constraint reaches the task at its next step (or, if
the task ends first, goes out as the next message); "stop" / "wait" / 止めて / 待って pauses
the task (the current step is cancelled cleanly, the state kept) until "continue" / 続けて.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import Any

from duckflow.companion import sidechat
from duckflow.companion.session import CompanionSession, TurnResult
from duckflow.companion.task import TaskOutcome, drive, outcome_of
from duckflow.core.chunks import AnyChunk


class DualLoop:
    def __init__(
        self,
        session: CompanionSession,
        *,
        max_turns: int = 12,
        auto_approve_workspace: bool = False,
        on_done: Callable[[TaskOutcome | None, BaseException | None], None] | None = None,
    ) -> None:
        self.session = session
        self.max_turns = max_turns
        self.auto_approve_workspace = auto_approve_workspace
        self.on_done = on_done
        self.on_start: Callable[[], None] | None = None  # a turn starts (the chat marks the checkpoints)
        self._task: asyncio.Task[TaskOutcome] | None = None
        self.last_outcome: TaskOutcome | None = None
        self.paused = False
        self.side: set[asyncio.Task[str]] = set()  # questions being answered meanwhile

    @property
    def owner(self) -> object:
        return self.session.owner

    @property
    def busy(self) -> bool:
        return self._task is not None and not self._task.done()

    # -- the task side --------------------------------------------------------------------
    def _start(self, first: Awaitable[TurnResult]) -> asyncio.Task[TaskOutcome]:
        return self._run(drive(self.session, first, max_turns=self.max_turns,
                               auto_approve_workspace=self.auto_approve_workspace), cancelled_here=True)

    def start_stream(self, chunks: AsyncIterator[AnyChunk]) -> asyncio.Task[TaskOutcome]:
        """A message through the front door (a `Conversation` stream, whose chunks reach the
        session's listeners on their way) as the task side; the outcome is its `done` chunk."""
        self.paused = False
        return self._run(outcome_of(chunks), cancelled_here=False)

    def _run(self, work: Coroutine[Any, Any, TaskOutcome], *, cancelled_here: bool) -> asyncio.Task[TaskOutcome]:
        if self.busy:
            work.close()
            raise RuntimeError("a task is already running")
        if self.on_start is not None:
            self.on_start()
        self._task = asyncio.create_task(self._body(work, cancelled_here))
        return self._task

    async def _body(self, work: Awaitable[TaskOutcome], cancelled_here: bool) -> TaskOutcome:
        try:
            outcome = await work
        except asyncio.CancelledError:
            if cancelled_here:  # a stream notes its own cancelled step
                self.session.note_cancelled()
            if self.on_done:
                self.on_done(None, None)
            raise
        except Exception as exc:
            if self.on_done:
                self.on_done(None, exc)
            raise
        self.last_outcome = outcome
        if self.on_done:
            self.on_done(outcome, None)
        return outcome

    def start_message(self, text: str) -> asyncio.Task[TaskOutcome]:
        self.paused = False
        return self._start(self.session.handle_message(text))

    def start_continue(self) -> asyncio.Task[TaskOutcome]:
        """Go on after a pause (or a stop): the next step, from the state as it was left."""
        self.paused = False
        self.session.chunks.notice("paused", "continuing the task")
        return self._start(self.session.continue_task(observed=True))

    # -- what the person types while the task runs ---------------------------------------
    async def interject(self, text: str) -> str:
        """Act on a line typed during a task; returns what was done: stop | question | correction."""
        kind = sidechat.classify(text)
        if kind == "stop":
            await self.pause()
        elif kind == "question":
            task = asyncio.create_task(self.session.ask(text))
            self.side.add(task)
            task.add_done_callback(self.side.discard)
        else:
            self.session.add_correction(text)
        return kind

    async def pause(self) -> bool:
        """Stop the running step cleanly; the state stays, "continue" goes on."""
        if not self.busy:
            return False
        step = self.session.state.step.value
        self.paused = True
        await self._stop()
        self.session.owner.change("paused", lambda s: s.log_decision(f"paused by the person during {step}"))
        self.session.chunks.notice("paused", f"paused during {step}; say \"continue\" (続けて) to go on, "
                                   "or tell me what to do instead")
        return True

    def start_answer(self, granted: bool, *, by: str = "user", note: str | None = None) -> asyncio.Task[TaskOutcome]:
        return self._start(self.session.answer_approval(granted, by=by, note=note))

    async def wait(self, timeout: float | None = None) -> TaskOutcome | None:
        if self._task is None:
            return self.last_outcome
        return await asyncio.wait_for(asyncio.shield(self._task), timeout)

    # -- the chat side (answers at once, also while the task runs) -----------------------
    def status_text(self) -> str:
        s = self.session.state
        lines = [
            f"step {s.step.value} · status {s.status.value}" + (" · working…" if self.busy else ""),
            f"goal: {s.goal or '-'}",
        ]
        if s.constraints:
            lines.append("constraints: " + "; ".join(s.constraints))
        if s.plan_brief:
            lines.append("plan: " + " → ".join(s.plan_brief))
        if s.pending_gate and s.pending_job:
            lines.append(f"waiting for approval: job {s.pending_job['job_id']} ({s.pending_job.get('summary', '')})")
        lines.append("vitals: " + s.vitals.line())
        if s.last_delta:
            lines.append(f"last change: {s.last_delta}")
        return "\n".join(lines)

    def add_constraint(self, text: str) -> str:
        """`/constraint TEXT`: the task's next prompt contains it."""
        self.session.owner.change(f"constraint added: {text}", lambda s: s.add_constraint(text))
        return "constraint added: " + "; ".join(self.session.state.constraints)

    async def cancel(self, timeout: float = 5.0) -> bool:
        """Cancel the running turn (Ctrl-C, Esc, /cancel): it ends as cancelled, not paused (its
        state and checkpoints stay, "continue" goes on, any other message starts clean); True
        when one was running and has stopped."""
        self.paused = False
        return await self._stop(timeout)

    async def _stop(self, timeout: float = 5.0) -> bool:
        if not self.busy or self._task is None:
            return False
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError, asyncio.TimeoutError):
            await asyncio.wait_for(self._task, timeout)
        return self._task.done()

