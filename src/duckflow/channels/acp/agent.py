"""The ACP agent: editor sessions over the one front door — prompt, streamed updates, permission, cancel, load.

`DuckflowAgent` implements the `agent-client-protocol` package's Agent side. `session/new`
opens a companion session for the workspace and its `Conversation` (channels/conversation.py)
on the `acp` channel; `session/prompt` sends the person's words through `Conversation.stream`
and every chunk goes out as `session/update`s (updates.py, words from channels/present.py).
When the turn stops at an approval, the card becomes `session/request_permission` with
allow-once / allow-always / reject: allow answers `stream_answer(job, True)`, allow-always
also lets the session's next workspace changes through the gate's workspace scope (never a
hard-required one), reject with words (`_meta.duckflow.note` in the answer) is the same
correction as the terminal's "no" with words, and a plain reject asks what to do instead —
the next prompt is that answer ("no" just refuses). `session/cancel` stops the running turn
(stopReason "cancelled", the state kept, as Ctrl-C). Sessions are the companion's saved
sessions: `session/load` replays their exchanges. Every method but `initialize` is refused
with a JSON-RPC error until `initialize` was called.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, update_agent_message_text, update_user_message_text
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptResponse,
)

from duckflow.channels.acp.prompt import prompt_text
from duckflow.channels.acp.transcript import Transcript
from duckflow.channels.acp.updates import Updates
from duckflow.channels.conversation import Conversation
from duckflow.errors import DuckflowError

log = logging.getLogger("duckflow.acp")
BY = "user (editor)"
ALWAYS_BY = "user: always for this session"  # as the terminal's "a" (channels/cli/answers.py)
OPTIONS = [PermissionOption(option_id="allow", name="Allow once", kind="allow_once"),
           PermissionOption(option_id="allow_always", name="Allow for this session", kind="allow_always"),
           PermissionOption(option_id="reject", name="Reject", kind="reject_once")]
INSTEAD = ("Not applied. What should it do instead? Your next message is taken as the answer "
           "(send \"no\" to just refuse).")
JUST_NO = {"no", "n", "nope", "reject", "deny", "いいえ"}


@dataclass
class Live:
    """One editor session: its conversation and what the editor answered so far."""

    conv: Conversation
    close: Any
    transcript: Transcript
    updates: Updates  # chunks → session updates, kept across turns (one thread of text)
    always: bool = False  # allow-always: workspace changes go through without asking
    instead: str | None = None  # a refused job whose "what instead" the next prompt says
    task: asyncio.Task[str] | None = None
    cancelled: bool = False
    asked: dict[str, Any] = field(default_factory=dict)  # the last approval card of the turn


def not_ready() -> RequestError:
    return RequestError(-32600, "Invalid request", {"details": "call initialize first"})


class DuckflowAgent:
    """An ACP agent over Duckflow's companion; `workspace` (-w) wins over the editor's cwd."""

    def __init__(self, *, workspace: Path | None = None, model_name: str | None = None,
                 codec: str | None = None, mode: str | None = None, max_turns: int = 12) -> None:
        self.workspace = workspace
        self.model_name = model_name
        self.codec = codec
        self.mode = mode
        self.max_turns = max_turns
        self.conn: Any = None
        self.ready = False
        self.reads = False  # the client offers fs/read_text_file
        self.sessions: dict[str, Live] = {}

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    # -- lifecycle ------------------------------------------------------------------------
    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
                         **kwargs: Any) -> InitializeResponse:
        from duckflow._version import __version__

        fs = getattr(client_capabilities, "fs", None)
        self.reads = bool(getattr(fs, "read_text_file", False))
        self.ready = True
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(load_session=True,
                                                 prompt_capabilities=PromptCapabilities(embedded_context=True),
                                                 mcp_capabilities=McpCapabilities(http=True, sse=False)),
            agent_info=Implementation(name="duckflow", title="Duckflow", version=__version__),
            auth_methods=[])

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        if not self.ready:
            raise not_ready()
        raise RequestError.invalid_params({"details": "Duckflow needs no authentication"})

    def _root(self, cwd: str) -> Path:
        root = self.workspace if self.workspace is not None else Path(cwd)
        if not root.is_absolute():
            raise RequestError.invalid_params({"details": f"cwd must be an absolute path, not {cwd!r}"})
        return root

    def _open(self, root: Path, session_id: str | None, mcp_servers: Any = None) -> Live:
        from duckflow.channels.acp.editor_mcp import with_editor_servers
        from duckflow.companion.factory import open_session

        try:
            config, left_out = with_editor_servers(root, mcp_servers)
            opened = open_session(root, model_name=self.model_name, session_id=session_id,
                                  codec=self.codec, mode=self.mode, config=config)
        except DuckflowError as exc:
            if session_id is not None and "no saved session" in exc.message:
                raise RequestError(-32002, "Resource not found", {"details": exc.message}) from None
            raise RequestError(-32603, exc.message, {"hint": exc.hint} if exc.hint else None) from None
        opened.session.open_notes += [("mcp", line) for line in left_out]  # said in the first turn
        try:
            conv = Conversation.for_session(opened, channel="acp", max_turns=self.max_turns)
        except BaseException:
            opened.close()
            raise

        def close() -> None:
            conv.close()
            opened.close()

        sid = opened.session.state.session_id
        live = Live(conv, close, Transcript(sid), Updates(opened.session.state.workspace, opened.session.runner.read_text))
        self.sessions[sid] = live
        return live

    async def new_session(self, cwd: str, mcp_servers: Any = None, additional_directories: Any = None,
                          **kwargs: Any) -> NewSessionResponse:
        if not self.ready:
            raise not_ready()
        live = self._open(self._root(cwd), None, mcp_servers)
        return NewSessionResponse(session_id=live.conv.session.state.session_id)

    async def load_session(self, cwd: str, session_id: str, mcp_servers: Any = None,
                           additional_directories: Any = None, **kwargs: Any) -> LoadSessionResponse:
        """The saved session, its exchanges replayed as user and agent messages."""
        if not self.ready:
            raise not_ready()
        live = self.sessions.get(session_id) or self._open(self._root(cwd), session_id, mcp_servers)
        kept = live.transcript.replay()
        if kept:
            from acp.schema import SessionNotification

            for raw in kept:
                update = SessionNotification.model_validate({"sessionId": session_id, "update": raw}).update
                await self.conn.session_update(session_id, update)
        else:
            await self._replay_exchanges(session_id, live)
        state = live.conv.session.state
        if state.pending_gate and live.instead is None:
            await self.conn.session_update(session_id, update_agent_message_text(
                "A change still waits for your approval; it is asked again with your next message."))
        return LoadSessionResponse()

    async def _replay_exchanges(self, session_id: str, live: Live) -> None:
        """A session started elsewhere (`duckflow chat`): its last exchanges, as the state keeps them."""
        from duckflow.channels.present import Presenter
        from duckflow.core.chunks import ReplyChunk, ReplyData

        for exchange in live.conv.session.state.exchanges:
            if exchange.user:
                await self.conn.session_update(session_id, update_user_message_text(exchange.user))
            shown = Presenter().feed(ReplyChunk(agent="companion", data=ReplyData(text=exchange.reply or "")))
            body = "\n".join(line.text for line in shown if line.text)
            if body:
                await self.conn.session_update(session_id, update_agent_message_text(body))

    # -- a turn ---------------------------------------------------------------------------
    def _live(self, session_id: str) -> Live:
        if not self.ready:
            raise not_ready()
        live = self.sessions.get(session_id)
        if live is None:
            raise RequestError(-32002, "Resource not found",
                               {"details": f"no session {session_id!r} here: session/new or session/load first"})
        return live

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        live = self._live(session_id)
        if live.task is not None and not live.task.done():
            raise RequestError(-32600, "Invalid request", {"details": "a prompt is already running in this session"})
        live.cancelled = False
        live.task = asyncio.create_task(self._prompted(session_id, live, prompt))  # busy from here on
        try:
            stop = await live.task
        except asyncio.CancelledError:
            if not live.cancelled:
                raise
            stop = "cancelled"
        finally:
            live.transcript.flush()
        return PromptResponse(stop_reason=stop)  # type: ignore[arg-type]

    async def _prompted(self, session_id: str, live: Live, prompt: list[Any]) -> str:
        text = await prompt_text(prompt, live.conv.session.state.workspace, self._reader(session_id))
        if not text.strip():
            raise RequestError.invalid_params({"details": "the prompt has no text"})
        live.transcript.add([update_user_message_text(text)])
        return await self._turn(session_id, live, text)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        live = self.sessions.get(session_id)
        if live is None or live.task is None or live.task.done():
            return
        live.cancelled = True
        live.task.cancel()

    def _reader(self, session_id: str) -> Any:
        if not self.reads:
            return None

        async def read(path: str) -> str:
            got = await self.conn.read_text_file(session_id=session_id, path=path)
            return str(got.content)

        return read

    async def _send(self, session_id: str, updates: list[Any]) -> None:
        live = self.sessions.get(session_id)
        if live is not None:
            live.transcript.add(updates)
        for update in updates:
            await self.conn.session_update(session_id, update)

    async def _turn(self, session_id: str, live: Live, text: str) -> str:
        conv = live.conv
        updates = live.updates
        if live.instead is not None:  # the answer to "what should it do instead?"
            job, live.instead = live.instead, None
            words = text.strip()
            note = None if words.lower().strip(".!") in JUST_NO else words
            stream = conv.stream_answer(job, False, by=BY, note=note)
        else:
            stream = conv.stream(text)
        while True:
            live.asked = {}
            ending = ""
            async for chunk in stream:
                if chunk.type == "approval" and chunk.data.phase == "request":
                    live.asked = {"job_id": chunk.data.job_id, "request": chunk.data.request, "call": chunk.data.call}
                if chunk.type == "done":
                    ending = chunk.data.ending or ""
                await self._send(session_id, updates.feed(chunk))
            if ending != "approval" or not live.asked.get("job_id"):
                return "end_turn"
            job = str(live.asked["job_id"])
            if live.always and self._let_through(live, job):
                stream = conv.stream_answer(job, True, by=ALWAYS_BY)
                continue
            opened, asked = updates.permission_call(job, live.asked.get("request") or {}, live.asked.get("call"))
            await self._send(session_id, opened)
            answer = await self.conn.request_permission(options=OPTIONS, session_id=session_id, tool_call=asked)
            outcome = answer.outcome
            if getattr(outcome, "outcome", "") != "selected":  # the editor cancelled the question
                live.cancelled = True
                return "cancelled"
            chosen = outcome.option_id
            if chosen in ("allow", "allow_always"):
                live.always = live.always or chosen == "allow_always"
                stream = conv.stream_answer(job, True, by=ALWAYS_BY if chosen == "allow_always" else BY)
                continue
            words = _words(answer) or _words(outcome)
            if words:
                stream = conv.stream_answer(job, False, by=BY, note=words)
                continue
            live.instead = job
            await self._send(session_id, updates.say(INSTEAD))
            return "end_turn"

    def _let_through(self, live: Live, job: str) -> bool:
        """Allow-always: a companion job inside the workspace scope is auto-approved (never a
        hard-required one, never a Coder's patch); False when a person must answer it."""
        from duckflow.gate import AutoApproveScope
        from duckflow.gate.request import Decision

        state = live.conv.session.state
        if not state.pending_gate or (state.pending_job or {}).get("job_id") != job:
            return False
        answered = live.conv.session.runner.gate.auto_answer(job, AutoApproveScope.workspace(), by=ALWAYS_BY)
        return isinstance(answered, Decision)

    def close(self) -> None:
        for live in self.sessions.values():
            if live.task is not None and not live.task.done():
                live.task.cancel()
            try:
                live.close()
            except Exception:  # noqa: BLE001 - closing the others matters more
                log.warning("closing a session failed", exc_info=True)
        self.sessions.clear()


def _words(obj: Any) -> str:
    """A reject's words, when the editor sent them: `_meta: {"duckflow": {"note": "..."}}` (or `note`)."""
    meta = getattr(obj, "field_meta", None) or {}
    if not isinstance(meta, dict):
        return ""
    inner = meta.get("duckflow") if isinstance(meta.get("duckflow"), dict) else meta
    note = inner.get("note") if isinstance(inner, dict) else None
    return note.strip() if isinstance(note, str) else ""
