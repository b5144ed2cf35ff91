"""The orchestrator: one person's message → route → the right role, bounded and logged (seed 003).

`Orchestrator.handle(text)` is what `duckflow chat`, `duckflow run` and the channels call for
every message. It routes (session flags in SQLite, events in the JSONL log) and then:

- `companion`: plain CODE goes to the coding companion when one is attached (every channel's
  `Conversation`), and so does CHAT unless the Chat role has a model of its own; the caller
  sends `turn.text` to it. Otherwise CHAT is answered by the Chat role, whose reply may delegate
  (`DELEGATE: ROUTE` + `TASK: ...`, read tolerantly, §2.6; `DELEGATE: CODE` hands the task to
  the companion when one is attached) or propose a reroute (§3.4 JSON). The Chat role sees
  the conversation so far (`history`) and writes the final answer of a Worker route (§1).
- `reply`: PLAN / ANALYZE / OPS / RESEARCH run the Worker loop (LoopController); its stop reason
  is in `turn.loop`.
- `approval`: CODE1/2/3 (and CODE on channels) run the Coder flow: plan + patch, a gate job;
  `answer(job_id, granted)` applies it after approval (the Worker).
- `notice`: /local, /cloud, or a CODE route refused while local_only.
Worker routes whose role has no model configured fall back to the companion (CLI) so nothing
breaks for a person who set only one model.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from duckflow.orchestra.contracts import ChatProposal, InputMessage, RoutingDecision
from duckflow.orchestra.loop import LoopController, LoopResult
from duckflow.orchestra.roles import error_text, is_timeout, role_for_route
from duckflow.orchestra.router import LIFT_LOCAL, MessageRouter, build_router
from duckflow.orchestra.settings import CODE_ROUTES, ROUTES

if TYPE_CHECKING:
    from duckflow.orchestra.coder import CoderFlow

Action = Literal["companion", "reply", "approval", "notice"]
_DELEGATE = re.compile(r"(?im)^[\s>*_`-]*DELEGATE\s*[:：]\s*\**\s*([A-Za-z0-9]+)")
_TASK = re.compile(r"(?ims)^[\s>*_`-]*TASK\s*[:：]\s*(.+?)(?=^[\s>*_`-]*DELEGATE\s*[:：]|\Z)")
WORKER_ROUTES = ("PLAN", "ANALYZE", "OPS", "RESEARCH")


@dataclass
class Turn:
    """What the orchestra did with one message and what the channel should show or do next."""

    decision: RoutingDecision
    action: Action
    text: str
    declaration: str = ""
    loop: LoopResult | None = None
    job_id: str | None = None
    failed: bool = False  # the routed work could not be done (no Coder model, the gate refused, ...)
    delegated: str = ""  # the task the Chat role handed on (DELEGATE: ... TASK: ...), to `to`
    to: str = ""  # the role it went to: companion | worker | coder1-3
    said: str = ""  # what the Chat role said to the person before it handed the message on
    work: str = ""  # the route of the work the companion is given (Chat's DELEGATE: CODE is CODE)
    answered_by: list[str] = field(default_factory=list)  # the role models that answered (names)

    @property
    def route(self) -> str:
        """The route of what is done with the message (the delegated one after DELEGATE:)."""
        return self.work or (self.loop.final_route if self.loop is not None else self.decision.primary_route)


def log_router_event(emit: Callable[..., Any], kind: str, data: dict[str, Any]) -> None:
    """A router's event into an event log's `emit(type, session_id, **fields)` (seed 003 §7)."""
    if kind == "router.decision":
        fields = {k: v for k, v in data.items() if k != "session_id"}
        fields.setdefault("final_route", fields.get("primary_route"))
        emit("router.decision", str(data.get("session_id", "")), **fields)
    elif kind == "classifier.error":
        emit("classifier.error", "", error_reason=data.get("error"), raw=data.get("raw", ""))


def read_delegation(reply: str) -> tuple[str, str] | None:
    """(route, task) when Chat's reply delegates (`DELEGATE: PLAN` + `TASK: ...`), tolerant of markup."""
    m = _DELEGATE.search(reply)
    if not m:
        return None
    route = m.group(1).strip().upper()
    if route not in ROUTES or route == "CHAT":
        return None
    t = _TASK.search(reply)
    task = t.group(1).strip().strip("*`").strip() if t else ""
    return route, task


def read_proposal(reply: str) -> ChatProposal | None:
    """Chat's §3.4 proposal `{propose_next_loop, route, reason, confidence}` when it is in the reply."""
    if "propose_next_loop" not in reply:
        return None
    from duckflow.protocols.jsonreply import read_json

    got = read_json(reply, ChatProposal)
    return got.value if got.ok and got.value.propose_next_loop else None


class Orchestrator:
    def __init__(self, config: Any, *, workspace: str | Path, session_id: str, channel: str = "cli",
                 models: dict[str, Any] | None = None, gate: Any = None, state: Any = None, events: Any = None,
                 companion: bool = True, router: MessageRouter | None = None, classifier_model: Any = None) -> None:
        from duckflow.orchestra.events import EventLog
        from duckflow.orchestra.roles import Roles
        from duckflow.orchestra.state import OrchestraState

        self.config = config
        self._history: list[tuple[str, str]] = []  # the current message's conversation so far
        self._images: list[Any] = []  # the current message's ImageParts
        self._image_records: list[dict[str, Any]] = []  # and the audit record of every file given
        self.workspace = Path(workspace)
        self.session_id = session_id
        self.channel = channel
        self.companion = companion
        self.events = events if events is not None else EventLog.from_settings(config.routing)
        self.state = state if state is not None else OrchestraState()
        if gate is None:
            from duckflow.gate import Gate

            gate = Gate.from_config(config.gate)
        self.gate = gate
        self.roles = Roles(config, models=models)
        from duckflow.orchestra.health import OllamaReadiness

        self.roles.health = OllamaReadiness(config.models.ollama.restart_command)
        self.router = router or build_router(config, on_event=self._router_event, classifier_model=classifier_model)
        self.loop = LoopController(self.roles, config.loop, emit=self.emit)

    @property
    def image_inputs(self) -> tuple[list[Any], list[dict[str, Any]]]:
        """The current message's ImageParts and the audit record of every image file it named."""
        return self._images, self._image_records

    @cached_property
    def coder(self) -> CoderFlow:
        """The Coder flow (orchestra.coder), made when a code route or a patch approval first needs it:
        a message the companion handles never imports it."""
        from duckflow.orchestra.coder import CoderFlow

        return CoderFlow(self.roles, workspace=self.workspace, gate=self.gate, state=self.state, emit=self.emit,
                         default_coder=self.config.routing.default_coder)

    def emit(self, type: str, session_id: str = "", **fields: Any) -> None:
        fields.setdefault("channel", self.channel)
        self.events.emit(type, session_id or self.session_id, **fields)

    def _router_event(self, kind: str, data: dict[str, Any]) -> None:
        log_router_event(self.emit, kind, data)

    def _has_model(self, role: str) -> bool:
        """With a companion attached, only a role's own model takes work away from it; without
        one, a role may use the default model too."""
        from duckflow.config import resolve_role

        if self.companion or self.roles.explicit(role):
            return self.roles.explicit(role)
        return resolve_role(role, self.config) is not None

    async def route(self, text: str, raw: dict[str, Any] | None = None, *, task: bool = False) -> RoutingDecision:
        """`task`: `duckflow run`'s task, coding by nature: not declared as CODE, and — unless the
        Chat role has a model of its own to talk with — CODE when nothing else decides."""
        msg = InputMessage(channel=self.channel, session_id=self.session_id, user_text=text,  # type: ignore[arg-type]
                           raw=raw or {})
        flags = self.state.flags(self.channel, self.session_id)
        fallback = "CODE" if task and not self._has_model("chat") else None
        decision = await self.router.decide(msg, flags, task=task, fallback=fallback)
        self.state.save_flags(self.channel, self.session_id, flags)
        return decision

    def coding(self, under_way: bool) -> None:
        """After a coding turn: the task goes on (its follow-ups stay CODE) or it ended (only what
        goes on with it stays CODE); the router reads it with the session's flags."""
        flags = self.state.flags(self.channel, self.session_id)
        flags.coding = "open" if under_way else "ended"
        self.state.save_flags(self.channel, self.session_id, flags)

    async def handle(self, text: str, raw: dict[str, Any] | None = None,
                     images: Sequence[str | Path] | None = None,
                     history: Sequence[tuple[str, str]] = (), task: bool = False) -> Turn:
        """One message; `images` (file paths, e.g. a LINE download) go to the role answering it;
        `history` is the conversation so far as (person, reply) pairs, for the Chat role; `task`:
        a task to carry out (`duckflow run`): without a Chat role model of its own, coding unless
        something says otherwise."""
        self.roles.used = []
        turn = await self._handle(text, raw, images, history, task)
        turn.answered_by = list(self.roles.used)
        return turn

    async def _handle(self, text: str, raw: dict[str, Any] | None, images: Sequence[str | Path] | None,
                      history: Sequence[tuple[str, str]], task: bool) -> Turn:
        self._history = list(history)
        self._images, self._image_records = [], []
        if images:
            from duckflow.orchestra.images import ImageInbox, prepare_images

            ImageInbox().cleanup()
            self._images, self._image_records = prepare_images(list(images))
        decision = await self.route(text, raw, task=task)
        local_only = decision.flags.local_only
        route = decision.primary_route
        body = decision.text or text
        if decision.refused or (decision.notice and not decision.text):
            return Turn(decision, "notice", decision.notice or LIFT_LOCAL)
        decl = decision.declaration
        if route == "CHAT" or (route == "CODE" and self.companion):
            if self.companion and (route == "CODE" or not self._has_model("chat")):
                self.emit("final.route", initial_route=route, final_route=route, stop_reason="companion")
                return Turn(decision, "companion", body, decl)
            return await self._chat(decision, body, local_only)
        if route in WORKER_ROUTES:
            if self.companion and not self._has_model("worker"):
                self.emit("final.route", initial_route=route, final_route=route, stop_reason="companion",
                          error_reason="no Worker model configured (routing.llm.worker_model)")
                return Turn(decision, "companion", body, decl)
            return await self._work(decision, route, body, local_only, decl)
        return await self._code(decision, route, body, local_only, decl)

    async def _work(self, decision: RoutingDecision, route: str, task: str, local_only: bool, decl: str,
                    *, reroute_used: bool = False, source: str = "worker", initial: str | None = None) -> Turn:
        result = await self.loop.run(route, task, session_id=self.session_id, local_only=local_only,
                                     reroute_used=reroute_used, initial_route=initial or decision.primary_route,
                                     reroute_source=source, images=self._images, context=self._analysis_context())
        self._keep_analysis(result, task)
        if result.stop_reason == "rerouted_to_code":
            turn = await self._code(decision, result.final_route, task, local_only, decl)
            turn.loop = result
            return turn
        if result.last is not None and self._has_model("chat"):
            return await self._final_by_chat(decision, task, result, local_only, decl)
        return Turn(decision, "reply", result.reply(), decl, loop=result)

    def _keep_analysis(self, result: LoopResult, task: str) -> None:
        """An ANALYZE result kept as structured data (seed 003 §9: one store, orchestra/state.py)."""
        last = result.last
        save = getattr(self.state, "save_analysis", None)  # (a state store without it keeps none)
        if last is None or result.final_route != "ANALYZE" or save is None:
            return
        save(channel=self.channel, session_id=self.session_id, workspace=str(self.workspace.resolve()),
             task=task, output=last.model_dump(include={
                 "result", "why", "next_actions", "questions_for_user", "confidence", "risk"}))

    def _analysis_context(self) -> str:
        """The latest analyses of this workspace, for the Worker's next turn (JSON, newest first)."""
        import json

        read = getattr(self.state, "analyses", None)
        kept = read(str(self.workspace.resolve()), limit=2) if read is not None else []
        if not kept:
            return ""
        return "earlier analyses (newest first): " + json.dumps(
            [{k: a[k] for k in ("task", "result", "next_actions", "confidence", "risk") if k in a} for a in kept],
            ensure_ascii=False)[:3000]

    async def _final_by_chat(self, decision: RoutingDecision, task: str, result: LoopResult, local_only: bool,
                             decl: str) -> Turn:
        """§1: the final answer comes from the conversation model; its §3.4 proposal may add one loop."""
        from duckflow.orchestra.roles import RoleUnavailable, prompt

        try:
            agent = self.roles.agent("chat", route="CHAT", local_only=local_only,
                                     instructions=prompt("chat_final", alias=self.roles.alias("chat"),
                                                         route=result.final_route, result=result.reply()))
            await self.roles.ready("chat")
        except RoleUnavailable:
            return Turn(decision, "reply", result.reply(), decl, loop=result)
        answer = await agent.run(self._messages(task), raise_errors=False)
        if not answer.ok or not answer.text.strip():
            return Turn(decision, "reply", result.reply(), decl, loop=result)
        proposal = read_proposal(answer.text)
        if proposal is None:
            return Turn(decision, "reply", answer.text.strip(), decl, loop=result)
        allowed = (self.config.loop.allow_chat_propose_reroute_once and not result.reroute_used
                   and proposal.route in WORKER_ROUTES and proposal.route != result.final_route
                   and proposal.confidence >= self.config.routing.classifier.min_confidence)
        if not allowed:
            return Turn(decision, "reply", result.reply(), decl, loop=result)
        self.emit("route.override", initial_route=result.initial_route, final_route=proposal.route,
                  source="chat_propose", reason=proposal.reason, reroute_used=True)
        again = await self.loop.run(proposal.route, task, session_id=self.session_id, local_only=local_only,
                                    reroute_used=True, initial_route=result.initial_route,
                                    reroute_source="chat", images=self._images)
        return Turn(decision, "reply", again.reply(), decl, loop=again)

    async def _code(self, decision: RoutingDecision, route: str, task: str, local_only: bool, decl: str) -> Turn:
        if local_only:  # insurance behind the router (§5)
            self.emit("loop.stop", initial_route=decision.primary_route, final_route=route,
                      stop_reason="code_refused_local_only", error_reason="local_only")
            return Turn(decision, "notice", LIFT_LOCAL)
        proposal = await self.coder.propose(route, task, session_id=self.session_id, channel=self.channel,
                                            local_only=local_only)
        action: Action = "approval" if proposal.status == "pending" else "reply"
        self.emit("final.route", initial_route=decision.primary_route, final_route=route,
                  stop_reason="need_user_confirmation" if action == "approval" else proposal.status,
                  job_id=proposal.job_id)
        return Turn(decision, action, proposal.message, decl, job_id=proposal.job_id,
                    failed=proposal.status in ("failed", "refused"), work=route)

    async def _chat(self, decision: RoutingDecision, text: str, local_only: bool) -> Turn:
        """Channels: the Chat role answers; DELEGATE:/TASK: or a §3.4 proposal hands the work on once."""
        from duckflow.orchestra.roles import RoleUnavailable, prompt

        try:
            agent = self.roles.agent("chat", route="CHAT", local_only=local_only,
                                     instructions=prompt("chat", alias=self.roles.alias("chat")))
            await self.roles.ready("chat")
        except RoleUnavailable as exc:
            return Turn(decision, "reply", f"{exc.message}. {exc.hint or ''}".strip())
        images = self._images
        result = await agent.run(self._messages(text, images), raise_errors=False)
        if not result.ok:
            if images and is_timeout(result.error):
                from duckflow.orchestra.images import audit_after_timeout

                audit_after_timeout(images)
            self.emit("worker.fail", initial_route="CHAT", final_route="CHAT", error_reason=error_text(result.error))
            return Turn(decision, "reply", f"Chat could not answer: {error_text(result.error)}")
        reply = result.text
        if not reply.strip():
            self.emit("worker.fail", initial_route="CHAT", final_route="CHAT", error_reason="empty reply")
            return Turn(decision, "reply", f"{self.roles.alias('chat')} gave no answer; please ask again.", failed=True)
        delegated = read_delegation(reply)
        if delegated is None:
            proposal = read_proposal(reply)
            if (proposal is not None and proposal.route != "CHAT" and self.config.loop.allow_chat_propose_reroute_once
                    and proposal.confidence >= self.config.routing.classifier.min_confidence):
                delegated = (proposal.route, text)
        if delegated is None:
            self.emit("final.route", initial_route="CHAT", final_route="CHAT", stop_reason="done")
            return Turn(decision, "reply", reply)
        route, task = delegated
        task = task or text
        mark = _DELEGATE.search(reply)
        said = reply[:mark.start()].strip() if mark else ""  # e.g. "On it." before the DELEGATE line
        self.emit("route.override", initial_route="CHAT", final_route=route, source="chat_delegate",
                  reason="Chat delegated")
        if route == "CODE" and self.companion:  # the coding companion does the work, with its approvals
            self.emit("final.route", initial_route="CHAT", final_route=route, stop_reason="companion")
            return Turn(decision, "companion", task, "", delegated=task, to="companion", said=said, work=route)
        if route in WORKER_ROUTES and self.companion and not self._has_model("worker"):
            self.emit("final.route", initial_route="CHAT", final_route=route, stop_reason="companion",
                      error_reason="no Worker model configured (routing.llm.worker_model)")
            return Turn(decision, "companion", task, "", delegated=task, to="companion", said=said, work=route)
        if route in CODE_ROUTES:
            if local_only:
                return Turn(decision, "notice", LIFT_LOCAL)
            turn = await self._code(decision, route, task, local_only, "")
        else:
            turn = await self._work(decision, route, task, local_only, "", reroute_used=True, source="chat",
                                    initial="CHAT")
        turn.delegated, turn.to = task, role_for_route(route, self.config.routing.default_coder)
        turn.said = said
        return turn

    def _messages(self, text: str, images: Sequence[Any] = ()) -> Any:
        """The Chat role's input: the conversation so far (the last 6 exchanges), then this message."""
        if not self._history and not images:
            return text
        from duckflow.llm.types import Message

        said: list[Message] = []
        for person, reply in self._history[-6:]:
            said += [Message("user", person[:2000]), Message("assistant", reply[:2000])]
        return [*said, Message("user", text, images=list(images))]

    async def answer(self, job_id: str, granted: bool, *, approver: str) -> str:
        """A person's yes/no on a Coder job; on yes the Worker applies the patch and reports."""
        return self.decide_job(job_id, granted, approver=approver)[1]

    def decide_job(self, job_id: str, granted: bool, *, approver: str, auto: bool = False) -> tuple[bool | None, str]:
        """A yes / no on a Coder job, or with `auto` the run's auto-approve scope (never for a
        hard-required job): (applied in full, what happened); None when the job still waits."""
        from duckflow.orchestra.coder import CoderFlow

        if auto:
            got = self.coder.auto_approve(job_id, by=approver, session_id=self.session_id)
            if isinstance(got, str):
                return None, f"job {job_id[:8]} still waits for a person: {got}"
        else:
            got = self.coder.decide(job_id, granted, approver=approver, session_id=self.session_id)
        return bool(got.get("ok")), CoderFlow._applied_text(got)

    def close(self) -> None:
        self.state.close()
