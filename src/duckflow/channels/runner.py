"""The one seam between channels and the engine: a person's message in, a stream of chunks out.

`SessionRunner.run_message(session_id, text, channel)` hands the message to the session's
`Orchestrator.handle()` (seed 003's router — LINE always starts at CHAT, §2.6 — then the
Worker loop or a Coder job when the route is theirs), and streams the companion's task
(`CompanionSession.stream`) when the route is the companion's, yielding core Chunks (the
companion's, serialised once by the chunk log, which restamps `seq`) or dicts shaped like them. `answer(...)` does the same for a yes/no on a pending approval
(the companion's `stream_answer`, or the orchestra's Coder job). Companion sessions are opened
on demand and share one session store, gate, token guard and trace per server; at most
`max_running` companion tasks run at once (a person whose message waits is told so; the route
is decided and shown before the wait).
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
        role_models: dict[str, Any] | None = None,
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
        self.role_models = role_models
        self._orchs: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._coder_jobs: dict[str, tuple[str, str]] = {}
        self._slots = asyncio.Semaphore(max_running)

    # -- sessions -------------------------------------------------------------------------
    def _shared_parts(self) -> dict[str, Any]:
        if self._shared is None:
            from duckflow.channels.behind import BehindCounter, BehindSessionStore
            from duckflow.config import load_config
            from duckflow.core.trace import trace_from_config
            from duckflow.gate import Gate

            cfg = load_config(self.workspace)
            from duckflow.core.token_guard import SQLiteCounter, TokenGuard

            guard = TokenGuard.from_config(cfg.token_guard)
            if isinstance(guard.counter, SQLiteCounter):  # this process owns its sessions' totals
                guard.counter = BehindCounter(guard.counter)
            # session states and token counts are written behind, off the event loop
            self._shared = {"config": cfg, "store": BehindSessionStore(),
                            "gate": Gate.from_config(cfg.gate, requested_by="server"),
                            "trace": trace_from_config(cfg.trace), "token_guard": guard}
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

    def workspace_of(self, session_id: str) -> str | None:
        """The workspace a saved session belongs to (None when open here or not saved)."""
        if session_id in self._open:
            return None
        loaded = self.store.load(session_id)
        return loaded[0].workspace if loaded is not None else None

    def belongs_here(self, session_id: str) -> bool:
        """True when the session is open here or was saved in this server's workspace (or in none)."""
        if session_id in self._open:
            return True
        home = self.workspace_of(session_id)
        return not home or Path(home).expanduser().resolve() == self.workspace

    # -- turns ----------------------------------------------------------------------------
    async def run_message(self, session_id: str, text: str, channel: str = "http",
                          images: list[str] | None = None) -> AsyncIterator[Any]:
        """Route the message (orchestra), then stream the companion's task; yields chunk dicts."""
        try:
            session = self._session(session_id)
            orch = self._orchestrator(session_id, channel)
            turn = await orch.handle(text, images=images)
        except DuckflowError as exc:
            yield chunk("error", code="session_error", message=exc.message, hint=exc.hint)
            yield chunk("done", text=exc.message, ending="error")
            return
        decision = turn.decision
        yield as_dict(NoticeChunk(agent="router", data=NoticeData(
            code="route", message=decision.declaration or f"route: {decision.primary_route}",
            details={**decision.public(), "text": text})))  # the person's words: the page shows both sides
        if turn.action != "companion":  # the router, the Worker loop or a Coder job answered
            for c in self._orchestra_turn(session, session_id, channel, text, turn):
                yield c
            return
        model = getattr(session, "model", None)
        if decision.flags.local_only and not getattr(model, "is_local", True):  # seed 003 §7, as the CLI
            msg = (f"local-only mode is on and the companion's model {getattr(model, 'name', '?')} is a cloud "
                   "model, so nothing was sent. Send /cloud to allow it, or set a local model.")
            yield as_dict(NoticeChunk(agent="router", data=NoticeData(code="router", message=msg)))
            yield chunk("done", agent="router", text=msg, ending="input")
            return
        await orch.roles.health.ensure(model)  # the Chat role's Ollama model is checked (cached)
        text = turn.text or text
        if images:  # answered by the session's model when it can see (one line why not, else)
            from duckflow.orchestra.look import answer_with_images

            yield as_dict(NoticeChunk(agent=AGENT, data=NoticeData(
                code="images", message=f"{len(images)} image(s) received")))
            looked = await answer_with_images(session, orch, text)
            yield chunk("reply", text=looked.text)
            yield chunk("done", text=looked.text, ending="done" if looked.ok else "input")
            return
        if session.state.pending_gate:
            job = session.state.pending_job or {}
            yield chunk("approval", phase="request", job_id=str(job.get("job_id", "")),
                        request=job.get("request") or {}, call=job.get("call") or {})
            yield chunk("done", text="an approval is still waiting: answer it first", ending="approval")
            return
        async for c in self._slot(lambda: session.stream(text, max_turns=self.max_turns)):
            yield c

    async def answer(self, session_id: str, job_id: str, granted: bool, *, by: str,
                     note: str | None = None) -> AsyncIterator[Any]:
        """A person's yes/no on the session's pending approval, then the task goes on."""
        session = self._session(session_id)
        job = session.state.pending_job or {}
        coder = self._coder_jobs.get(job_id)
        if coder is not None and coder[1] == session_id:  # a Coder job: on yes the Worker applies it
            del self._coder_jobs[job_id]
            yield chunk("approval", phase="answer", job_id=job_id, granted=granted, by=by)
            report = await self._orchestrator(session_id, coder[0]).answer(job_id, granted, approver=by)
            yield chunk("reply", agent="worker", text=report)
            yield chunk("done", agent="worker", text=report, ending="done" if granted else "input")
            return
        if not session.state.pending_gate or job.get("job_id") != job_id:
            # a chat button answers only the job its own session waits on: nothing else is decided
            yield as_dict(NoticeChunk(agent=AGENT, data=NoticeData(
                code="approval_refused", message=f"job {job_id[:8]} is not waiting in this conversation; "
                                                 "nothing was decided")))
            return
        async for c in self._slot(lambda: session.stream_answer(granted, by=by, note=note,
                                                                max_turns=self.max_turns)):
            yield c

    async def _slot(self, start: Callable[[], AsyncIterator[Any]]) -> AsyncIterator[Any]:
        """Run a companion task in one of `max_running` slots (the rest wait, and are told so)."""
        if self._slots.locked():
            yield as_dict(NoticeChunk(agent=AGENT, data=NoticeData(
                code="queued", message="the server is busy: your message waits for a free worker")))
        async with self._slots:
            async for c in self._guard(start()):
                yield c

    async def _guard(self, stream: AsyncIterator[Any]) -> AsyncIterator[Any]:
        """The companion's chunks (core Chunks: the chunk log serialises each once); a failure
        below ends the run with an error and `done`."""
        try:
            async for c in stream:
                yield c
        except DuckflowError as exc:
            yield chunk("error", code="task_error", message=exc.message, hint=exc.hint)
            yield chunk("done", text=exc.message, ending="error")
        except Exception as exc:  # a bug below must not kill the channel: say it, keep the session
            yield chunk("error", code="internal_error", message=f"{type(exc).__name__}: {exc}")
            yield chunk("done", text="the task failed", ending="error")

    def _orchestrator(self, session_id: str, channel: str) -> Any:
        """The session's `Orchestrator` (companion=True, as the CLI's), sharing router, state, log, gate."""
        from duckflow.orchestra.orchestrator import Orchestrator

        channel = channel if channel in ("cli", "line", "slack", "http") else "http"
        key = (channel, session_id)
        orch = self._orchs.get(key)
        if orch is None:
            self._route_parts()
            parts = self._shared_parts()
            orch = Orchestrator(parts["config"], workspace=self.workspace, session_id=session_id, channel=channel,
                                models=self.role_models, gate=parts["gate"], state=self._ostate,
                                events=self._events, companion=True, router=self._router)
            self._orchs[key] = orch
            while len(self._orchs) > self.max_open:
                self._orchs.popitem(last=False)
        else:
            self._orchs.move_to_end(key)
        return orch

    def _orchestra_turn(self, session: Any, session_id: str, channel: str, text: str,
                        turn: Any) -> list[dict[str, Any]]:
        """A turn the orchestra answered itself, as chunks; what it said joins the companion's exchanges."""
        route = turn.loop.final_route if turn.loop is not None else turn.decision.primary_route
        if turn.action == "notice":
            return [as_dict(NoticeChunk(agent="router", data=NoticeData(code="router", message=turn.text))),
                    chunk("done", agent="router", text=turn.text, ending="input")]
        session.owner.change(f"orchestra {route} reply", lambda st: st.add_exchange(text, f"[{route}] {turn.text}"))
        if turn.action == "approval" and turn.job_id:
            self._coder_jobs[turn.job_id] = (channel, session_id)
            job = self._ostate.job(turn.job_id) or {}
            proposal = job.get("proposal") or {}
            request = {"intent": turn.text.splitlines()[0] if turn.text else f"{route} proposal",
                       "summary": turn.text, "rationale": str(proposal.get("plan", "")),
                       "impact": str(proposal.get("risk", "")), "risk": str(proposal.get("risk_level", "medium")),
                       "alternatives": "deny, and say what to do instead",
                       "diff_preview": str(proposal.get("patch", ""))}
            return [chunk("reply", agent="coder", text=turn.text),
                    chunk("approval", agent="coder", phase="request", job_id=turn.job_id, request=request),
                    chunk("done", agent="coder", text=turn.text, ending="approval")]
        agent = "worker" if turn.loop is not None else "chat"
        return [chunk("reply", agent=agent, text=turn.text), chunk("done", agent=agent, text=turn.text, ending="done")]

    def waiting_on(self, job_id: str) -> str | None:
        """The session that waits on this job (a companion approval or a Coder job), if any."""
        coder = self._coder_jobs.get(job_id)
        if coder is not None:
            return coder[1]
        for sid, session in list(self._open.items()):
            job = session.state.pending_job or {}
            if session.state.pending_gate and job.get("job_id") == job_id:
                return str(sid)
        return None

    def _route_parts(self) -> None:
        if self._router is None:  # the orchestra's router, its session flags and event log, once per server
            from duckflow.channels.flagstate import ServerState
            from duckflow.orchestra.events import EventLog
            from duckflow.orchestra.router import build_router

            cfg = self._shared_parts()["config"]
            from duckflow.channels.eventqueue import BackgroundEvents

            self._events = BackgroundEvents(EventLog.from_settings(cfg.routing))
            self._ostate = ServerState()  # flags in memory, written off the loop when they change
            self._router = build_router(cfg, on_event=self._router_event)

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
        if self._events is not None:
            self._events.close()
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
