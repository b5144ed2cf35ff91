"""The one seam between channels and the engine: a person's message in, a stream of chunks out.

`SessionRunner.run_message(session_id, text, channel)` routes the message through the
orchestra's router (`duckflow.orchestra.route_async`; LINE always starts at CHAT, seed 003
§2.6), then streams the companion's task (`CompanionSession.stream`) until it finishes, needs
the person or waits for an approval, yielding core Chunks as dicts (the chunk log restamps
`seq`). `answer(...)` does the same for a yes/no on a pending approval (`stream_answer`).
Companion sessions are opened on demand and share one session store, gate, token guard and
trace per server; at most `max_running` companion tasks run at once (a person whose message
waits is told so; the route is decided and shown before the wait).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from duckflow.core.chunks import NoticeChunk, NoticeData, now_iso
from duckflow.errors import DuckflowError

AGENT = "companion"


def chunk(type_: str, agent: str = AGENT, **data: Any) -> dict[str, Any]:
    """A chunk dict for what the channel layer itself says (errors, the end of a failed run)."""
    return {"time": now_iso(), "agent": agent, "type": type_, "data": data}


def as_dict(c: Any) -> dict[str, Any]:
    """A core Chunk as the dict the chunk log keeps (its seq is restamped there)."""
    data: dict[str, Any] = c.model_dump(mode="json")
    return data


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
        max_running: int = 16,
    ) -> None:
        self.workspace = Path(workspace).expanduser().resolve()
        self.model_name = model_name
        self.model_factory = model_factory
        self.max_open = max_open
        self.max_turns = max_turns
        self._open: OrderedDict[str, Any] = OrderedDict()
        self._shared: dict[str, Any] | None = None
        self._router: Any = None
        self._events: Any = None
        self._ostate: Any = None
        self._slots = asyncio.Semaphore(max_running)

    # -- sessions -------------------------------------------------------------------------
    def _shared_parts(self) -> dict[str, Any]:
        if self._shared is None:
            from duckflow.companion.store import SessionStore
            from duckflow.config import load_config
            from duckflow.core.trace import trace_from_config
            from duckflow.gate import Gate

            cfg = load_config(self.workspace)
            from duckflow.core.token_guard import TokenGuard

            self._shared = {"config": cfg, "store": SessionStore(),
                            "gate": Gate.from_config(cfg.gate, requested_by="server"),
                            "trace": trace_from_config(cfg.trace),
                            "token_guard": TokenGuard.from_config(cfg.token_guard)}
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
                              gate=parts["gate"], trace=parts["trace"],
                              token_guard=parts["token_guard"])
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
        """Route the message (orchestra), then stream the companion's task; yields chunk dicts."""
        try:
            session = self._session(session_id)
            decision = await self._route(session_id, text, channel)
        except DuckflowError as exc:
            yield chunk("error", code="session_error", message=exc.message, hint=exc.hint)
            yield chunk("done", text=exc.message, ending="error")
            return
        yield as_dict(NoticeChunk(agent="router", data=NoticeData(
            code="route", message=decision.declaration or f"route: {decision.primary_route}",
            details=decision.public())))
        if decision.notice:  # e.g. `/local` switched on, or `/code` refused: the router answers
            yield as_dict(NoticeChunk(agent="router", data=NoticeData(code="router", message=decision.notice)))
            yield chunk("done", agent="router", text=decision.notice, ending="input")
            return
        text = decision.text or text
        if images:
            yield as_dict(NoticeChunk(agent=AGENT, data=NoticeData(
                code="images", message=f"{len(images)} image(s) received; the companion reads text only "
                                       "for now, so their files are named in the message")))
            text = text + "\n" + "\n".join(f"(image: {p})" for p in images)
        if session.state.pending_gate:
            job = session.state.pending_job or {}
            yield chunk("approval", phase="request", job_id=str(job.get("job_id", "")),
                        request=job.get("request") or {}, call=job.get("call") or {})
            yield chunk("done", text="an approval is still waiting: answer it first", ending="approval")
            return
        async for c in self._slot(lambda: session.stream(text, max_turns=self.max_turns)):
            yield c

    async def answer(self, session_id: str, job_id: str, granted: bool, *, by: str,
                     note: str | None = None) -> AsyncIterator[dict[str, Any]]:
        """A person's yes/no on the session's pending approval, then the task goes on."""
        session = self._session(session_id)
        job = session.state.pending_job or {}
        if not session.state.pending_gate or job.get("job_id") != job_id:
            # a chat button answers only the job its own session waits on: nothing else is decided
            yield as_dict(NoticeChunk(agent=AGENT, data=NoticeData(
                code="approval_refused", message=f"job {job_id[:8]} is not waiting in this conversation; "
                                                 "nothing was decided")))
            return
        async for c in self._slot(lambda: session.stream_answer(granted, by=by, note=note,
                                                                max_turns=self.max_turns)):
            yield c

    async def _slot(self, start: Callable[[], AsyncIterator[Any]]) -> AsyncIterator[dict[str, Any]]:
        """Run a companion task in one of `max_running` slots (the rest wait, and are told so)."""
        if self._slots.locked():
            yield as_dict(NoticeChunk(agent=AGENT, data=NoticeData(
                code="queued", message="the server is busy: your message waits for a free worker")))
        async with self._slots:
            async for c in self._guard(start()):
                yield c

    async def _guard(self, stream: AsyncIterator[Any]) -> AsyncIterator[dict[str, Any]]:
        """The companion's chunks as dicts; a failure below ends the run with an error and `done`."""
        try:
            async for c in stream:
                yield as_dict(c)
        except DuckflowError as exc:
            yield chunk("error", code="task_error", message=exc.message, hint=exc.hint)
            yield chunk("done", text=exc.message, ending="error")
        except Exception as exc:  # a bug below must not kill the channel: say it, keep the session
            yield chunk("error", code="internal_error", message=f"{type(exc).__name__}: {exc}")
            yield chunk("done", text="the task failed", ending="error")

    async def _route(self, session_id: str, text: str, channel: str) -> Any:
        from duckflow.orchestra import InputMessage

        if self._router is None:  # the orchestra's router, its session flags and event log, once per server
            from duckflow.orchestra.events import EventLog
            from duckflow.orchestra.router import build_router
            from duckflow.orchestra.state import OrchestraState

            cfg = self._shared_parts()["config"]
            self._events = EventLog(cfg.routing.events_path)
            self._ostate = OrchestraState()
            self._router = build_router(cfg, on_event=self._router_event)
        channel = channel if channel in ("cli", "line", "slack", "http") else "http"
        flags = self._ostate.flags(channel, session_id)  # /local survives a restart, as in the CLI
        msg = InputMessage(channel=channel, session_id=session_id, user_text=text)
        before = (flags.local_only, flags.prev_route)
        decision = await self._router.decide(msg, flags)
        if (flags.local_only, flags.prev_route) != before:  # a write only when the mode or route moved
            self._ostate.save_flags(channel, session_id, flags)
        return decision

    def _router_event(self, kind: str, data: dict[str, Any]) -> None:
        """The router's decisions into the orchestra's event log (seed 003 §7), as `Orchestrator` writes them."""
        if kind == "router.decision":
            fields = {k: v for k, v in data.items() if k != "session_id"}
            fields.setdefault("final_route", fields.get("primary_route"))
            self._events.emit("router.decision", str(data.get("session_id", "")), **fields)
        elif kind == "classifier.error":
            self._events.emit("classifier.error", error_reason=data.get("error"), raw=data.get("raw", ""))

    def close(self) -> None:
        self._open.clear()
        if self._ostate is not None:
            self._ostate.close()
            self._ostate = None
        if self._shared is not None:
            trace = self._shared["trace"]
            if hasattr(trace, "close"):
                trace.close()
            self._shared["gate"].close()
            counter = getattr(self._shared["token_guard"], "counter", None)
            if counter is not None and hasattr(counter, "close"):
                counter.close()
            self._shared["store"].close()
            self._shared = None
