"""The single owner of a session's AgentState: every change goes through it (seed 001 §4.4).

Both loops of the dual loop (chat and task) hold a reference to one `StateOwner`, never a copy
of the state. Each change is applied under a lock, stamped, announced to the change callbacks
(so whatever reads the state next sees the latest) and written to the session store: at once,
or — inside a turn (`coalesced()`) — at the turn's next `flush()`, which the session makes
before every tool run (it changes the workspace), as soon as an approval is asked (the gate's
job exists; a person may answer it from another process) and when the turn ends, however it
ends (an error, a cancel); a person's message turn is also stored before its first model
call (the task it sets survives a process killed during a long local-model call). A turn's
changes between two such points are one transaction instead of one each: what a crash can
lose is only the progress of a turn in flight that has changed nothing outside the process yet
(it only called models): the turn is made again on resume.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from duckflow.companion.plan import PlanTool
from duckflow.companion.state import AgentState, Status, Step
from duckflow.companion.store import SessionStore
from duckflow.companion.transitions import Source, TransitionController, TransitionRecord

log = logging.getLogger("duckflow.companion")

Listener = Callable[[AgentState, str], None]


class StateOwner:
    """Holds the state, the transition controller and the plans of one session."""

    def __init__(
        self,
        state: AgentState,
        controller: TransitionController | None = None,
        store: SessionStore | None = None,
        plans: PlanTool | None = None,
    ) -> None:
        self._state = state
        self.controller = controller or TransitionController()
        self.store = store
        self.plans = plans or PlanTool()
        self._listeners: list[Listener] = []
        self._lock = threading.RLock()
        self._extra_key: tuple[Any, ...] | None = None
        self._extra: dict[str, Any] | None = None
        self._coalescing: dict[tuple[int, Any], int] = {}  # (thread, task) inside coalesced() -> depth
        self._dirty = False  # a change not written yet (made inside coalesced())

    @property
    def state(self) -> AgentState:
        return self._state

    def add_listener(self, callback: Listener) -> None:
        """`callback(state, what_changed)` runs after every change."""
        self._listeners.append(callback)

    def _commit(self, what: str) -> None:
        self._state.last_updated = time.time()
        if self._coalescing and _who() in self._coalescing:
            self._dirty = True  # written at the turn's next flush()
        else:
            self.persist()
        for cb in list(self._listeners):
            try:
                cb(self._state, what)
            except Exception:  # a broken listener must not break the conversation
                log.exception("state listener failed on %r", what)

    def persist(self) -> None:
        with self._lock:
            if self.store is not None:
                self.store.save(self._state, self.extra())
            self._dirty = False

    def flush(self) -> None:
        """Write the changes made inside `coalesced()` and not written yet (nothing when none)."""
        if self._dirty:
            self.persist()

    @contextmanager
    def coalesced(self) -> Iterator[None]:
        """The changes this task (or thread) makes inside are written at the next `flush()` and
        when the outermost block ends (also on an error or a cancel), not one write each.
        Changes made by other tasks meanwhile are written at once, as always."""
        who = _who()
        with self._lock:
            self._coalescing[who] = self._coalescing.get(who, 0) + 1
        try:
            yield
        finally:
            with self._lock:
                depth = self._coalescing.pop(who) - 1
                if depth:
                    self._coalescing[who] = depth
            if not depth:
                self.flush()

    def extra(self) -> dict[str, Any]:
        hist = self.controller.history
        key = (len(hist), hist[-1] if hist else None, id(self.plans), self.plans.version)
        if self._extra_key == key and self._extra is not None:
            return self._extra
        self._extra_key, self._extra = key, self._build_extra()
        return self._extra

    def _build_extra(self) -> dict[str, Any]:
        return {
            "transitions": [
                {
                    "at": r.at, "from": r.from_step.value, "to": r.to_step.value,
                    "allowed": r.allowed, "reason": r.reason, "source": r.source,
                }
                for r in self.controller.history
            ],
            "plans": self.plans.to_dict(),
        }

    def change(self, what: str, fn: Callable[[AgentState], object]) -> None:
        """Apply `fn` to the state as one change, described by `what`."""
        with self._lock:
            fn(self._state)
            self._commit(what)

    def set_status(self, status: Status, why: str = "") -> bool:
        """Change the status; an impossible Step × Status pair is refused and recorded (False)."""
        with self._lock:
            kept = self._checked(self._state.step, status)
            if kept != status:
                self._commit(f"status {status.value} refused")
                return False

            def apply(s: AgentState) -> None:
                s.status = status

            self.change(f"status {status.value}" + (f": {why}" if why else ""), apply)
            return True

    def _checked(self, step: Step, status: Status) -> Status:
        """`status` when `step` may carry it; otherwise the refusal is recorded and a possible one returned."""
        table = self.controller.table
        if table.status_allowed(step, status):
            return status
        current = self._state.status
        kept = current if table.status_allowed(step, current) else table.default_status(step)
        rec = self.controller.refuse_status(step, status, kept)
        self._state.log_decision(rec.reason)
        log.debug("status refused: %s", rec.line())
        return kept

    def new_utterance(self) -> None:
        self.controller.limiter.new_utterance()

    def transition(
        self, to: Step, reason: str, *, source: Source = "decision", status: Status | None = None
    ) -> TransitionRecord:
        """Try one move; the record says whether it happened and why (refusals are logged too)."""
        with self._lock:
            src = self._state.step
            rec = self.controller.request(src, to, reason, source)
            self._after(rec, status or Status.IN_PROGRESS)
            return rec

    def recover(self, reason: str) -> TransitionRecord:
        """After an ERROR: back to PLANNING while retries remain; otherwise ask the person."""
        with self._lock:
            rec = self.controller.recover(self._state.step, self._state.recovery_retries, reason)
            if rec.allowed:
                self._state.recovery_retries += 1
                self._after(rec, Status.IN_PROGRESS)
            else:
                self._after(rec, Status.REQUIRES_USER_INPUT)
            return rec

    def _after(self, rec: TransitionRecord, status: Status) -> None:
        s = self._state
        if rec.allowed:
            s.step = rec.to_step
            s.status = self._checked(rec.to_step, status)
            s.set_last_delta(f"step {rec.from_step.value} → {rec.to_step.value}: {rec.reason}")
            s.log_decision(f"{rec.from_step.value}→{rec.to_step.value}: {rec.reason}")
            if rec.to_step == Step.DONE:
                s.recovery_retries = 0
            self._commit(rec.line())
        else:
            log.debug("transition refused: %s", rec.line())
            if rec.source == "recovery":
                s.status = self._checked(s.step, status)
            self._commit(rec.line())

    def restore_history(self, extra: dict[str, Any]) -> None:
        """Put back the transition history and plans saved with the session."""
        from duckflow.companion.transitions import TransitionRecord as Rec

        for r in extra.get("transitions", []):
            try:
                self.controller.history.append(
                    Rec(r["at"], Step(r["from"]), Step(r["to"]), r["allowed"], r["reason"], r["source"])
                )
            except (KeyError, ValueError):
                continue
        self.plans = PlanTool.from_dict(extra.get("plans", {}))


def _who() -> tuple[int, Any]:
    """The thread and asyncio task running now (task None outside a running loop)."""
    try:
        task = asyncio.current_task()
    except RuntimeError:
        task = None
    return threading.get_ident(), task
