"""The one seam between channels and the engine: a person's message in, a stream of chunks out.

`SessionRunner.run_message(session_id, text, channel)` routes the message (LINE always starts
at CHAT, seed 003 §2.6), runs the companion until it finishes, needs the person or waits for an
approval, and yields chunk dicts shaped like core Chunks `{time, agent, type, data}` (the chunk
log stamps `seq`). `answer(...)` does the same for a yes/no on a pending approval. Companion
sessions are opened on demand and share one session store, gate and trace per server.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from duckflow.core.chunks import now_iso
from duckflow.errors import DuckflowError

AGENT = "companion"
ROUTE_COMMANDS = {"chat": "CHAT", "plan": "PLAN", "code": "CODE", "analyze": "ANALYZE",
                  "ops": "OPS", "research": "RESEARCH"}


def chunk(type_: str, agent: str = AGENT, **data: Any) -> dict[str, Any]:
    return {"time": now_iso(), "agent": agent, "type": type_, "data": data}


def event_chunk(ev: Any) -> dict[str, Any] | None:
    """A companion event as a chunk (None for events a channel does not show)."""
    k, d = ev.kind, ev.data
    if k == "thinking":
        return chunk("status", text=ev.text)
    if k == "decision":
        return chunk("decision", rationale=ev.text, step=d.get("step"), pattern=d.get("pattern"),
                     next_step=d.get("next_step"))
    if k in ("transition", "refused"):
        return chunk("transition", text=ev.text, allowed=k == "transition",
                     from_step=d.get("from_step"), to_step=d.get("to_step"))
    if k == "plan":
        return chunk("plan", text=ev.text, plan_id=d.get("plan_id"), actions=d.get("actions") or [])
    if k == "tool_call":
        call = d.get("call") or {}
        return chunk("tool_call", id=str(call.get("id", "")), name=str(call.get("name", "")),
                     arguments=call.get("arguments") or {})
    if k == "tool_result":
        call = d.get("call") or {}
        return chunk("tool_response", id=str(call.get("id", "")), name=str(call.get("name", "")),
                     content=ev.text, is_error=d.get("status") != "ok", status=d.get("status"))
    if k == "approval":
        return chunk("approval", job_id=d.get("job_id"), request=d.get("request") or {}, text=ev.text)
    if k == "proposed":
        return chunk("notice", text=f"proposed, not run: {ev.text}")
    if k == "reply":
        return chunk("delta", text=ev.text)
    if k == "notice":
        return chunk("notice", text=ev.text)
    if k == "error":
        return chunk("error", code="companion_error", message=ev.text)
    return None


class SessionRunner:
    """Opens companion sessions for one workspace and streams their turns as chunks."""

    def __init__(
        self,
        workspace: str | Path,
        *,
        model_name: str | None = None,
        model_factory: Callable[[], Any] | None = None,
        max_open: int = 2000,
        max_turns: int = 12,
        home: str | Path | None = None,
    ) -> None:
        self.workspace = Path(workspace).expanduser().resolve()
        self.model_name = model_name
        self.model_factory = model_factory
        self.max_open = max_open
        self.max_turns = max_turns
        self._open: OrderedDict[str, Any] = OrderedDict()
        self._shared: dict[str, Any] | None = None
        self._home = home

    # -- sessions -------------------------------------------------------------------------
    def _shared_parts(self) -> dict[str, Any]:
        if self._shared is None:
            from duckflow.companion.store import SessionStore
            from duckflow.config import load_config
            from duckflow.core.trace import trace_from_config
            from duckflow.gate import Gate

            cfg = load_config(self.workspace)
            self._shared = {"config": cfg, "store": SessionStore(),
                            "gate": Gate.from_config(cfg.gate, requested_by="server"),
                            "trace": trace_from_config(cfg.trace)}
        return self._shared

    @property
    def gate(self) -> Any:
        return self._shared_parts()["gate"]

    @property
    def store(self) -> Any:
        return self._shared_parts()["store"]

    def new_session(self) -> str:
        return str(self._session(None).state.session_id)

    def _session(self, session_id: str | None) -> Any:
        from duckflow.companion.factory import open_session

        if session_id is not None and session_id in self._open:
            self._open.move_to_end(session_id)
            return self._open[session_id]
        parts = self._shared_parts()
        model = self.model_factory() if self.model_factory is not None else None
        opened = open_session(self.workspace, model=model, model_name=self.model_name,
                              session_id=session_id, config=parts["config"], store=parts["store"],
                              gate=parts["gate"], trace=parts["trace"])
        session = opened.session
        self._open[session.state.session_id] = session
        while len(self._open) > self.max_open:
            self._open.popitem(last=False)
        return session

    def session(self, session_id: str) -> Any:
        """The open companion session (opening it from the store); DuckflowError if unknown."""
        return self._session(session_id)

    def exists(self, session_id: str) -> bool:
        return session_id in self._open or self.store.load(session_id) is not None

    # -- turns ----------------------------------------------------------------------------
    async def run_message(self, session_id: str, text: str, channel: str = "http",
                          images: list[str] | None = None) -> AsyncIterator[dict[str, Any]]:
        """Route the message, then run the companion; yields chunk dicts as they happen."""
        route = await self._route(text, channel)
        yield chunk("route", agent="router", **route)
        try:
            session = self._session(session_id)
        except DuckflowError as exc:
            yield chunk("error", code="session_error", message=exc.message, hint=exc.hint)
            yield chunk("done", ending="error", text=exc.message)
            return
        if images:
            yield chunk("notice", text=f"{len(images)} image(s) received; the companion reads text "
                                       "only for now, so they are listed in the message")
            text = text + "\n" + "\n".join(f"(image: {p})" for p in images)
        if session.state.pending_gate:
            job = session.state.pending_job or {}
            yield chunk("approval", job_id=job.get("job_id"), request=job.get("request") or {},
                        text="an approval is still waiting: answer it first (approve or deny)")
            yield chunk("done", ending="approval", text="an approval is waiting")
            return
        async for c in self._drive(session, lambda: session.handle_message(text)):
            yield c

    async def answer(self, session_id: str, job_id: str, granted: bool, *, by: str,
                     note: str | None = None) -> AsyncIterator[dict[str, Any]]:
        """A person's yes/no on the session's pending approval, then the task goes on."""
        session = self._session(session_id)
        job = session.state.pending_job or {}
        if not session.state.pending_gate or job.get("job_id") != job_id:
            self.gate.decide(job_id, granted, by, note)  # a job of no open turn: the gate keeps it
            yield chunk("notice", text=f"job {job_id[:8]} {'granted' if granted else 'denied'} by {by}")
            return
        yield chunk("approval_answer", job_id=job_id, granted=granted, by=by)
        async for c in self._drive(session, lambda: session.answer_approval(granted, by=by, note=note)):
            yield c

    async def _drive(self, session: Any, first: Callable[[], Awaitable[Any]]) -> AsyncIterator[dict[str, Any]]:
        from duckflow.companion.task import drive

        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()

        def listener(ev: Any) -> None:
            c = event_chunk(ev)
            if c is not None:
                queue.put_nowait(c)

        session.events.subscribe(listener)
        task = asyncio.create_task(drive(session, first(), max_turns=self.max_turns))
        task.add_done_callback(lambda _t: queue.put_nowait(None))
        try:
            while True:
                item = await queue.get()
                if item is None:
                    break
                yield item
            try:
                outcome = task.result()
            except DuckflowError as exc:
                yield chunk("error", code="task_error", message=exc.message, hint=exc.hint)
                yield chunk("done", ending="error", text=exc.message)
                return
            except Exception as exc:  # a bug below must not kill the channel: say it, keep the session
                yield chunk("error", code="internal_error", message=f"{type(exc).__name__}: {exc}")
                yield chunk("done", ending="error", text="the task failed")
                return
            yield chunk("done", ending=outcome.ending, text=outcome.message, turns=outcome.turns,
                        step=session.state.step.value, status=session.state.status.value)
        finally:
            with contextlib.suppress(ValueError):
                session.events._listeners.remove(listener)
            if not task.done():
                task.cancel()

    async def _route(self, text: str, channel: str) -> dict[str, Any]:
        if channel == "line":
            return {"route": "CHAT", "source": "line_forced_chat", "reason": "LINE starts at CHAT"}
        from duckflow.routing import CommandRouter, RouterChain

        chain = RouterChain([CommandRouter(ROUTE_COMMANDS)], fallback_route="CHAT")
        decision = await chain.route(text)
        d = decision.to_dict()
        return {"route": d.get("route") or d.get("primary_route") or "CHAT",
                "source": str(d.get("source", "fallback")), "reason": str(d.get("reason", ""))}

    def close(self) -> None:
        self._open.clear()
        if self._shared is not None:
            trace = self._shared["trace"]
            if hasattr(trace, "close"):
                trace.close()
            self._shared["gate"].close()
            self._shared["store"].close()
            self._shared = None
