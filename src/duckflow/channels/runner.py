"""A server's sessions: companion sessions opened on demand, each person's `Conversation`, shared parts and slots.

`SessionRunner.run_message(session_id, text, channel)` hands the message to the session's
`Conversation` on that channel (channels/conversation.py, the one front door: route, then the
companion, the Chat role, the Worker loop or a Coder job) and yields its core Chunks (the chunk
log serialises each once and restamps `seq`). `answer(...)` does the same for a yes / no on a
pending approval or Coder job. Sessions share one session store, gate, token guard, trace,
router and event log per server; at most `max_running` companion tasks run at once (a person
whose message waits is told so; the route is decided and shown before the wait).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from duckflow.core.chunks import now_iso
from duckflow.errors import DuckflowError

if TYPE_CHECKING:
    from duckflow.channels.conversation import Conversation
    from duckflow.companion.session import CompanionSession
    from duckflow.llm.types import Model

AGENT = "companion"


def chunk(type_: str, agent: str = AGENT, **data: Any) -> dict[str, Any]:
    """A chunk dict for what the channel layer itself says (errors, the end of a failed run)."""
    return {"time": now_iso(), "agent": agent, "type": type_, "data": data}


class SessionRunner:
    """Opens companion sessions for one workspace and streams their turns as chunks."""

    def __init__(
        self,
        workspace: str | Path,
        *,
        model_name: str | None = None,
        model_factory: Callable[[], Model] | None = None,
        max_open: int = 2000,
        max_turns: int = 12,
        max_running: int = 16,
        role_models: dict[str, Model] | None = None,
    ) -> None:
        self.workspace = Path(workspace).expanduser().resolve()
        self.model_name = model_name
        self.model_factory = model_factory
        self.max_open = max_open
        self.max_turns = max_turns
        self._open: OrderedDict[str, CompanionSession] = OrderedDict()
        self._shared: dict[str, Any] | None = None
        self._router: Any = None
        self._events: Any = None
        self._ostate: Any = None
        self.role_models = role_models
        self._orchs: OrderedDict[tuple[str, str], Conversation] = OrderedDict()  # (channel, session) → its Conversation
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
            from duckflow.companion.factory import mcp_hub

            hub, _ = mcp_hub(self.workspace, cfg)  # one set of MCP servers for every session
            self._shared = {"config": cfg, "store": BehindSessionStore(), "mcp": hub,
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

    def _session(self, session_id: str | None) -> CompanionSession:
        from duckflow.companion.factory import open_session

        if session_id is not None and session_id in self._open:
            self._open.move_to_end(session_id)
            return self._open[session_id]
        parts = self._shared_parts()
        model = self.model_factory() if self.model_factory is not None else None
        opened = open_session(self.workspace, model=model, model_name=self.model_name,
                              session_id=session_id, config=parts["config"], store=parts["store"],
                              gate=parts["gate"], trace=parts["trace"],
                              token_guard=parts["token_guard"], mcp=parts["mcp"])
        session = opened.session
        self._open[session.state.session_id] = session
        while len(self._open) > self.max_open:
            self._open.popitem(last=False)
        return session

    def session(self, session_id: str) -> CompanionSession:
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
        """The message through the session's `Conversation` (the one front door); yields its chunks."""
        try:
            conv = self._conversation(session_id, channel)
        except DuckflowError as exc:
            yield chunk("error", code="session_error", message=exc.message, hint=exc.hint)
            yield chunk("done", text=exc.message, ending="error")
            return
        async for c in conv.stream(text, images or ()):
            yield c
        self._note_coder_job(conv, session_id)

    def command_now(self, session_id: str, text: str, channel: str = "http") -> list[dict[str, Any]] | None:
        """A chat command sent while the session's turn runs, answered at once as the terminal does
        (`/status` says it works, `/undo` waits until the task stops): its chunks, without a `done`
        (the running turn's ends the stream). None when `text` is not one of the chat's commands."""
        from duckflow.channels.commands import ROUTER, command_word
        from duckflow.channels.conversation import COMMAND

        word = command_word(text)
        if word is None or word in ROUTER:
            return None
        said = self._conversation(session_id, channel).command(word, busy=True)
        return [chunk("notice", COMMAND, code="command", message=text,
                      details={"text": text, "word": word, "ok": said.ok, "diff": said.diff}),
                chunk("reply", COMMAND, text=said.text)]

    async def answer(self, session_id: str, job_id: str, granted: bool, *, by: str,
                     note: str | None = None) -> AsyncIterator[Any]:
        """A person's yes/no on the session's pending approval (or Coder job), then the work goes on."""
        coder = self._coder_jobs.get(job_id)
        channel = coder[0] if coder is not None and coder[1] == session_id else "http"
        conv = self._conversation(session_id, channel)
        if coder is not None and coder[1] == session_id:
            del self._coder_jobs[job_id]
            conv.coder_job = job_id  # asked in another conversation object (another process, a restart)
        async for c in conv.stream_answer(job_id, granted, by=by, note=note):
            yield c
        self._note_coder_job(conv, session_id)  # a no with words asks the Coder again: a new job waits

    def _note_coder_job(self, conv: Conversation, session_id: str) -> None:
        """The Coder job the conversation now waits on, so an answer from any channel finds it."""
        if conv.coder_job:
            self._coder_jobs[conv.coder_job] = (conv.orch.channel, session_id)

    def _conversation(self, session_id: str, channel: str) -> Conversation:
        """The session's `Conversation` on this channel, sharing router, flags, event log, gate and slots."""
        from duckflow.channels.conversation import Conversation
        from duckflow.orchestra.orchestrator import Orchestrator

        session = self._session(session_id)
        channel = channel if channel in ("cli", "line", "slack", "http") else "http"
        key = (channel, session_id)
        conv = self._orchs.get(key)
        if conv is not None and conv.session is session:
            self._orchs.move_to_end(key)
            return conv
        if conv is not None:  # the session was opened afresh: a conversation over the new one
            conv.close()
        self._route_parts()
        parts = self._shared_parts()
        orch = Orchestrator(parts["config"], workspace=self.workspace, session_id=session_id, channel=channel,
                            models=self.role_models, gate=parts["gate"], state=self._ostate,
                            events=self._events, companion=True, router=self._router)
        conv = self._orchs[key] = Conversation(session, orch, max_turns=self.max_turns, slots=self._slots)
        while len(self._orchs) > self.max_open:
            self._orchs.popitem(last=False)[1].close()
        return conv

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
            from functools import partial

            from duckflow.channels.eventqueue import BackgroundEvents
            from duckflow.channels.flagstate import ServerState
            from duckflow.orchestra.events import EventLog
            from duckflow.orchestra.orchestrator import log_router_event
            from duckflow.orchestra.router import build_router

            cfg = self._shared_parts()["config"]
            self._events = BackgroundEvents(EventLog.from_settings(cfg.routing))
            self._ostate = ServerState()  # flags in memory, written off the loop when they change
            self._router = build_router(cfg, on_event=lambda kind, data: log_router_event(
                partial(self._events.emit), kind, data))

    def close(self) -> None:
        for conv in self._orchs.values():
            conv.close()
        self._orchs.clear()
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
            if self._shared["mcp"] is not None:
                self._shared["mcp"].close()  # the servers' processes end
            self._shared = None
