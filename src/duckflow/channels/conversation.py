"""The one front door: a person's message in, one Chunk stream out, the same on every channel.

`Conversation.stream(text, images=())` answers the chat's own commands (/undo, /status …,
channels/commands.py, as the terminal does; an unknown /word refused) without a model, else routes
the message (commands → rules → classifier → fallback; LINE always starts at CHAT; a coding task's
follow-ups stay CODE) and then runs whoever the route is for: the coding companion — on its cloud
model only for coding, on a local one otherwise (companion/seats.py, seed 003 §7) — the Chat role (which may hand the message on with `DELEGATE:`), the Worker loop
(whose result the Chat role words when it has a model of its own) or a Coder job that waits
for approval. It yields core Chunks in every case, each emitted once through the session's
`ChunkHub` (one seq; a terminal renderer subscribed there sees the same chunks). A stream ends
with a `done` chunk whose `ending` says why. `stream_answer(job_id, granted)` is a person's
yes / no on what waits: a companion approval or a Coder job. The CLI (`chat`, `run`), the
server, Slack and LINE call only these two; they keep rendering, prompting and session slots.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from duckflow.channels.commands import (
    ROUTER,
    Answer,
    Changes,
    answer_command,
    command_arg,
    command_word,
)
from duckflow.companion.factory import OpenedSession
from duckflow.companion.seats import Seats
from duckflow.companion.session import CompanionSession
from duckflow.companion.state import Step
from duckflow.companion.task import AUTO_BY
from duckflow.config import Config, load_config
from duckflow.core.chunks import (
    AnyChunk,
    ApprovalChunk,
    ApprovalData,
    DoneChunk,
    DoneData,
    ErrorChunk,
    ErrorData,
    NoticeChunk,
    NoticeData,
    ReplyChunk,
    ReplyData,
)
from duckflow.errors import DuckflowError
from duckflow.llm.types import Model
from duckflow.orchestra.orchestrator import Orchestrator, Turn
from duckflow.orchestra.roles import role_for_route
from duckflow.orchestra.settings import CODE_ROUTES

COMPANION = "companion"
COMMAND = "command"  # the agent of a chat command's answer
LOOP_ENDINGS = {"done": "done", "need_user_confirmation": "input"}


class Conversation:
    """One person's conversation on one channel: a companion session behind the orchestra's router."""

    def __init__(self, session: CompanionSession, orchestra: Orchestrator, *, max_turns: int = 12,
                 slots: asyncio.Semaphore | None = None, local_model: Model | None = None) -> None:
        self.session = session
        self.orch = orchestra
        self.seats = Seats(session, orchestra.config, local_model=local_model,
                           codec=session.asked_codec, mode=session.asked_mode)
        self._held = ""  # a message not sent (no local model for it): a bare /code sends it as coding
        self.max_turns = max_turns
        self.slots = slots  # at most this many companion tasks at once (a server's); None: no limit
        self.coder_job: str | None = None  # the Coder job this conversation waits on
        self._coder_tasks: dict[str, str] = {}  # a Coder job's task, as the person asked it
        self.route: str | None = None  # the last message's route
        self._reshown = False  # a waiting approval is being shown again
        self.unsubscribe = session.chunks.subscribe(self._mirror)
        self._closers: list[Callable[[], None]] = []  # what this conversation opened itself
        self.changes: Changes | None = None  # /undo, /redo, /diff (made on the first one)

    @classmethod
    def for_session(cls, opened: OpenedSession, *, channel: str = "cli", config: Config | None = None,
                    models: dict[str, Model] | None = None, max_turns: int = 12,
                    local_model: Model | None = None) -> Conversation:
        """The conversation over an opened companion session: the orchestra's router, session flags
        and event log on `channel`, the session's gate; `models` gives roles their models directly
        (`{"chat": ..., "worker": ...}`), `local_model` the companion's model for what is not coding
        when its own is a cloud model. `close()` closes the orchestra's state it opened."""
        cfg = config if config is not None else opened.config if opened.config is not None \
            else load_config(opened.session.state.workspace)
        state = opened.session.state
        orch = Orchestrator(cfg, workspace=state.workspace, session_id=state.session_id, channel=channel,
                            models=models, gate=opened.session.runner.gate, companion=True)
        conv = cls(opened.session, orch, max_turns=max_turns, local_model=local_model)
        conv._closers.append(orch.state.close)
        return conv

    @classmethod
    def open(cls, workspace: str | Path, *, model: Model | None = None, model_name: str | None = None,
             session_id: str | None = None, resume: bool = False, channel: str = "cli",
             models: dict[str, Model] | None = None, max_turns: int = 12,
             local_model: Model | None = None) -> Conversation:
        """Open (or resume) a companion session for `workspace` and the conversation over it, as
        `duckflow chat` does; `close()` closes both.

            conv = Conversation.open("~/project", model_name="local:default")
            async for chunk in conv.stream("add a --verbose flag to cli.py"): ...
        """
        from duckflow.companion.factory import open_session

        opened = open_session(workspace, model=model, model_name=model_name, session_id=session_id, resume=resume)
        try:
            conv = cls.for_session(opened, channel=channel, models=models, max_turns=max_turns,
                                   local_model=local_model)
        except BaseException:
            opened.close()
            raise
        conv._closers.append(opened.close)
        return conv

    # -- the stream -----------------------------------------------------------------------
    def _say(self, chunk: AnyChunk) -> AnyChunk:
        return self.session.chunks.emit(chunk)

    def _done(self, agent: str, text: str, ending: str) -> AnyChunk:
        return self._say(DoneChunk(agent=agent, data=DoneData(text=text, ending=ending)))

    def _reply(self, agent: str, text: str) -> AnyChunk:
        return self._say(ReplyChunk(agent=agent, data=ReplyData(text=text)))

    def _notice(self, agent: str, code: str, message: str, **details: Any) -> AnyChunk:
        return self._say(NoticeChunk(agent=agent, data=NoticeData(code=code, message=message, details=details)))

    def _error(self, code: str, exc: DuckflowError | Exception) -> list[AnyChunk]:
        if isinstance(exc, DuckflowError):
            message, hint = exc.message, exc.hint
        else:  # a bug below must not kill the channel: say it, keep the session
            message, hint = f"{type(exc).__name__}: {exc}", None
        return [self._say(ErrorChunk(agent=COMPANION, data=ErrorData(code=code, message=message, hint=hint))),
                self._done(COMPANION, message if isinstance(exc, DuckflowError) else "the task failed", "error")]

    async def stream(self, text: str, images: Sequence[str] = (), *, auto_approve_workspace: bool = False,
                     said: str | None = None, task: bool = False) -> AsyncIterator[AnyChunk]:
        """Route the message, then run the role it is for; yields its chunks, ending with `done`.
        `said`: the person's own words when `text` was composed for them (a Coder asked again);
        `task`: a task to carry out (`duckflow run`): coding unless something says otherwise."""
        word = command_word(text)
        if word is not None and word not in ROUTER:  # the chat's own: answered here, never routed
            for c in self._command(word, text):
                yield c
            return
        history = [(e.user, e.reply) for e in self.session.state.exchanges[-6:]]
        try:
            turn = await self.orch.handle(text, images=list(images) or None, history=history, task=task)
        except Exception as exc:  # noqa: BLE001 - said as one line, the session kept (no traceback)
            for c in self._error("session_error" if isinstance(exc, DuckflowError) else "internal_error", exc):
                yield c
            return
        decision = turn.decision
        self.route = turn.route
        yield self._notice("router", "route", decision.declaration or f"route: {decision.primary_route}",
                           **decision.public(), declaration=decision.declaration,
                           text=text if said is None else said)
        if turn.answered_by and not turn.failed and turn.action != "notice":  # a role's model: the person is told
            yield self._notice("router", "answered_by", "answered by " + " + ".join(turn.answered_by),
                               models=list(turn.answered_by))
        if turn.said:  # the Chat role's own words before it handed the message on
            yield self._reply("chat", turn.said)
        if turn.delegated:  # the Chat role handed it on: said before what that role did
            to = "the companion" if turn.to == COMPANION else self.orch.roles.alias(turn.to)
            yield self._notice("chat", "delegated", f"{self.orch.roles.alias('chat')} handed this to {to}: "
                                                    f"{turn.delegated}", to=turn.to)
        if turn.action != "companion":  # the router, the Chat role, the Worker loop or a Coder job answered
            for c in self._orchestra_turn(text, turn, auto_approve_workspace):
                yield c
            return
        body = turn.text or text
        if turn.route in CODE_ROUTES and not turn.decision.text.strip() and self._held:
            body = self._held  # a bare /code: the message that was not sent, now as coding
        self._held = ""
        refusal = self.seats.take(turn.route, turn.decision.flags.local_only)  # cloud only for coding
        if refusal:
            self._held = body
            yield self._notice("router", "router", refusal)
            yield self._done("router", refusal, "input")
            return
        model = getattr(self.session, "model", None)
        await self.orch.roles.health.ensure(model)  # an Ollama model is checked before each message (cached)
        if images:
            async for c in self._look(body, len(images)):
                yield c
            return
        if self.session.state.pending_gate:
            job = self.session.state.pending_job or {}
            self._reshown = True  # shown again, not asked again: the event log has it once
            yield self._say(ApprovalChunk(agent=COMPANION, data=ApprovalData(
                phase="request", job_id=str(job.get("job_id", "")), request=job.get("request") or {},
                call=job.get("call") or {})))
            self._reshown = False
            yield self._done(COMPANION, "an approval is still waiting: answer it first", "approval")
            return
        async for c in self._slot(lambda: self.session.stream(body, max_turns=self.max_turns,
                                                              auto_approve_workspace=auto_approve_workspace)):
            yield c
        self._coded()

    async def stream_answer(self, job_id: str, granted: bool, *, by: str, note: str | None = None,
                            auto_approve_workspace: bool = False) -> AsyncIterator[AnyChunk]:
        """A person's yes / no on what this conversation waits on; the work goes on after a yes."""
        if job_id and job_id == self.coder_job:  # a Coder job: on yes the Worker applies it
            self.coder_job = None
            yield self._say(ApprovalChunk(agent="coder", data=ApprovalData(
                phase="answer", job_id=job_id, granted=granted, by=by)))
            applied, report = self.orch.decide_job(job_id, granted, approver=by)
            self.orch.coding(under_way=False)  # the Coder's task ended (a no with words asks it again)
            for c in self._applied(applied, report, granted and not note):
                yield c
            if not granted and note and note.strip():  # "no, do it this way": the Coder is asked again
                async for c in self.stream(self._instead(job_id, note.strip()), said=""):
                    yield c
            return
        job = self.session.state.pending_job or {}
        if not self.session.state.pending_gate or job.get("job_id") != job_id:
            # a chat button answers only the job its own conversation waits on: nothing else is decided
            yield self._notice(COMPANION, "approval_refused", f"job {job_id[:8]} is not waiting in this "
                                                              "conversation; nothing was decided")
            return
        async for c in self._slot(lambda: self.session.stream_answer(
                granted, by=by, note=note, max_turns=self.max_turns, auto_approve_workspace=auto_approve_workspace)):
            yield c
        self._coded()

    def _instead(self, job_id: str, note: str) -> str:
        """The message that asks the same Coder again after a no with the person's words."""
        job = self.orch.state.job(job_id) or {}
        route = str(job.get("route") or "CODE")
        plan = str((job.get("proposal") or {}).get("plan", "")).strip().splitlines()
        before = f" (it proposed: {plan[0][:200]})" if plan else ""
        task = self._coder_tasks.pop(job_id, "")
        return (f"/{route.lower()} {task}\nThe person said no to the first proposal{before} and said "
                f"what to do instead: {note}").replace(" \n", "\n")

    def _command(self, word: str, text: str) -> list[AnyChunk]:
        """`/undo`, `/status` … as the terminal answers them (channels/commands.py): no router, no
        model, nothing added to the conversation's exchanges or task (so never its name)."""
        said = self.command(word, arg=command_arg(text))
        return [self._notice(COMMAND, "command", text, text=text, word=word, ok=said.ok, diff=said.diff),
                self._reply(COMMAND, said.text), self._done(COMMAND, said.text, "done")]

    def command(self, word: str, *, busy: bool = False, arg: str = "") -> Answer:
        """The answer to `/word`; `busy`: a turn runs now (what would change files waits, as in the terminal)."""
        if self.changes is None:
            self.changes = Changes(self.session.state.workspace)
        return answer_command(word, self.session.state, changes=self.changes, channel=self.orch.channel, busy=busy,
                              arg=arg, model=str(getattr(getattr(self.session, "model", None), "name", "?")))

    # -- the companion's part -------------------------------------------------------------
    def _coded(self) -> None:
        """After a companion turn on a coding route: its task goes on, or it ended (the router
        keeps the follow-ups of one on CODE)."""
        if self.route in CODE_ROUTES:
            self.orch.coding(under_way=self.session.state.step != Step.DONE)

    async def _look(self, text: str, count: int) -> AsyncIterator[AnyChunk]:
        """A message with images: answered by the session's model when it can see (one line why not, else)."""
        from duckflow.orchestra.look import answer_with_images

        yield self._notice(COMPANION, "images", f"{count} image(s) received")
        looked = await answer_with_images(self.session, self.orch, text)
        yield self._reply(COMPANION, looked.text)
        yield self._done(COMPANION, looked.text, "done" if looked.ok else "input")

    async def _slot(self, start: Callable[[], AsyncIterator[AnyChunk]]) -> AsyncIterator[AnyChunk]:
        """Run a companion task in one of the slots (a message that waits for one is told so)."""
        if self.slots is None:
            async for c in self._guard(start()):
                yield c
            return
        if self.slots.locked():
            yield self._notice(COMPANION, "queued", "the server is busy: your message waits for a free worker")
        async with self.slots:
            async for c in self._guard(start()):
                yield c

    async def _guard(self, stream: AsyncIterator[AnyChunk]) -> AsyncIterator[AnyChunk]:
        """The companion's chunks; a failure below ends the stream with an error and `done`."""
        try:
            async for c in stream:
                yield c
        except DuckflowError as exc:
            for c in self._error("task_error", exc):
                yield c
        except Exception as exc:  # noqa: BLE001 - said to the person, the session kept
            for c in self._error("internal_error", exc):
                yield c

    # -- a turn the orchestra answered ----------------------------------------------------
    def _orchestra_turn(self, text: str, turn: Turn, auto_approve_workspace: bool) -> list[AnyChunk]:
        """What the router, the Chat role, the Worker loop or a Coder said, as chunks; it joins the
        companion's exchanges, so the next message (to whichever role) sees it. A Coder job waits
        for a yes, or is auto-approved when the run allows it (never a hard-required one)."""
        if turn.action == "notice":
            ending = "input" if turn.decision.refused else "done"
            return [self._notice("router", "router", turn.text), self._done("router", turn.text, ending)]
        route = turn.loop.final_route if turn.loop is not None else turn.decision.primary_route
        self.session.owner.change(f"orchestra {route} reply",
                                  lambda st: st.add_exchange(text, f"[{route}] {turn.text}"))
        if turn.action == "approval" and turn.job_id:
            request = self._coder_request(turn.job_id, turn.text)
            coder = self.orch.roles.alias(role_for_route(route, self.orch.config.routing.default_coder))
            said = [self._reply("coder", f"{coder} proposes a change: {request.get('intent') or route}"),
                    self._say(ApprovalChunk(agent="coder", data=ApprovalData(
                        phase="request", job_id=turn.job_id, request=request)))]
            if auto_approve_workspace:
                by = AUTO_BY
                applied, report = self.orch.decide_job(turn.job_id, True, approver=by, auto=True)
                if applied is not None:
                    said.append(self._say(ApprovalChunk(agent="coder", data=ApprovalData(
                        phase="answer", job_id=turn.job_id, granted=True, by=f"auto:{by}"))))
                    return said + self._applied(applied, report, True)
                said.append(self._notice("coder", "router", report))
            self.coder_job = turn.job_id
            self._coder_tasks = {turn.job_id: turn.delegated or turn.decision.text or text}
            return [*said, self._done("coder", turn.text, "approval")]
        if turn.loop is not None:
            agent, ending = "worker", LOOP_ENDINGS.get(turn.loop.stop_reason, "stopped")
        else:
            agent, ending = "coder" if route.startswith("CODE") else "chat", "stopped" if turn.failed else "done"
        return [self._reply(agent, turn.text), self._done(agent, turn.text, ending)]

    def _applied(self, applied: bool | None, report: str, granted: bool) -> list[AnyChunk]:
        """The Worker's report on an answered Coder job, and how the turn ended."""
        ending = "done" if applied else "stopped" if granted else "input"
        return [self._reply("worker", report), self._done("worker", report, ending)]

    def _coder_request(self, job_id: str, text: str) -> dict[str, Any]:
        """The approval card of a Coder job: the gate's request (the five points, the files, the patch),
        as a companion approval's card is."""
        try:
            return self.orch.coder.gate.get(job_id).request.to_dict()
        except DuckflowError:  # not in this gate (another process's job): what the Coder proposed
            job = self.orch.state.job(job_id)
            proposal = (job or {}).get("proposal") or {}
            return {"intent": text.splitlines()[0] if text else "a change proposed by the Coder",
                    "rationale": str(proposal.get("plan", "")), "risk": str(proposal.get("risk_level", "medium")),
                    "diff_preview": str(proposal.get("patch", ""))}

    async def resume_coder_job(self, job_id: str, *, auto_approve_workspace: bool = False
                               ) -> AsyncIterator[AnyChunk]:
        """A Coder job of this session from an earlier run: answered elsewhere (`duckflow approvals
        grant`) or now by the run's auto-approve, it is applied (or closed); else its card is
        shown again and it waits."""
        current = self.orch.coder.gate.get(job_id)
        if current.status == "pending" and auto_approve_workspace:
            applied, report = self.orch.decide_job(job_id, True, approver=AUTO_BY, auto=True)
            if applied is not None:
                for c in self._applied(applied, report, True):
                    yield c
                return
            yield self._notice("coder", "router", report)
        if current.status == "pending":
            self.coder_job = job_id
            text = f"The change of job {job_id[:8]} still waits for your approval."
            yield self._reply("coder", text)
            yield self._say(ApprovalChunk(agent="coder", data=ApprovalData(
                phase="request", job_id=job_id, request=self._coder_request(job_id, text))))
            yield self._done("coder", text, "approval")
            return
        decision = getattr(current, "decision", None)
        by = getattr(decision, "by", None) or "elsewhere (duckflow approvals)"
        granted = current.status in ("granted", "auto_approved")
        applied, report = self.orch.decide_job(job_id, granted, approver=by)
        for c in self._applied(applied, report, granted):
            yield c

    # -- the event log --------------------------------------------------------------------
    def _mirror(self, chunk: AnyChunk) -> None:
        """The companion's approvals in the same event log as the orchestra's (seed 003 §7.3);
        a Coder job's are logged by the Coder flow itself."""
        if chunk.type != "approval" or chunk.agent == "coder" or self._reshown:
            return
        d = chunk.data
        now = datetime.now(UTC).isoformat(timespec="milliseconds")
        route = self.route
        if d.phase == "request":
            req = d.request or {}
            self.orch.emit("approval.requested", job_id=d.job_id, approval_status="pending",
                           approval_requested_at=now, initial_route=route, final_route=route,
                           risk=req.get("risk"), coder_output={"intent": str(req.get("intent", ""))[:300]},
                           source=COMPANION)
            return
        by = d.by or ""
        kind, status = (("approval.auto_approved", "auto_approved") if by.startswith("auto") else
                        ("approval.granted", "granted")) if d.granted else ("approval.denied", "denied")
        self.orch.emit(kind, job_id=d.job_id, approval_status=status, approval_decided_at=now, approver=by,
                       initial_route=route, final_route=route, source=COMPANION)

    def close(self) -> None:
        self.unsubscribe()
        while self._closers:
            self._closers.pop(0)()
