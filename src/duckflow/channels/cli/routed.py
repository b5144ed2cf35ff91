"""The router in front of the companion for `duckflow chat` and `duckflow run` (seed 003).

`RoutedInput.send(text)` asks the orchestra first: it prints the route declaration line (only
when the route changes, never for CHAT), answers `/local` / `/cloud` and refused CODE itself,
runs the Worker loop or the Coder → approval → Worker flow, and returns the text the companion
should get when the route is the companion's (CHAT, plain CODE), else None. A Coder job that
waits for approval is answered with `answer()` (yes / no in the chat). A message with images
(`--image FILE`) on the companion's route is answered by the session's model when it can see
(`orchestra.look`), else one line says why nothing was sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

YES = {"y", "yes", "ok", "approve", "はい"}
NO = {"n", "no", "deny", "いいえ"}


@dataclass
class OrchestraOutcome:
    """Shaped like the companion's outcome so `duckflow run` reports and exits the same way."""

    success: bool
    ending: str
    message: str
    turns: int = 0


def chat_model_name(workspace: Any) -> str | None:
    """The Chat role's model when `routing.llm.chat_model` is set: the companion's Main decision is
    made by the Chat role (seed 003); None leaves the companion's own choice (models.roles.chat or .default)."""
    from pathlib import Path

    from duckflow.config import load_config
    from duckflow.orchestra.settings import role_model_name

    root = Path(workspace)
    cfg = load_config(root if root.is_dir() else None)
    if not cfg.routing.llm.chat_model:
        return None
    return role_model_name("chat", cfg.routing, cfg.models)


class RoutedInput:
    def __init__(self, opened: Any, console: Any, *, config: Any = None, quiet: bool = False) -> None:
        from duckflow.config import load_config
        from duckflow.orchestra.orchestrator import Orchestrator

        state = opened.session.state
        self.session = opened.session
        cfg = config if config is not None else load_config(state.workspace)
        self.console = console
        self.quiet = quiet
        self.orch = Orchestrator(cfg, workspace=state.workspace, session_id=state.session_id, channel="cli",
                                 gate=opened.session.runner.gate, companion=True)
        subscribe = getattr(getattr(opened.session, "chunks", None), "subscribe", None)
        if subscribe is not None:
            subscribe(self._approval_events)
        for note in cfg.routing.llm.deprecations:
            self._print(f"note: {note}", "dim yellow")
        self.pending_job: str | None = None
        self.last_job: str | None = None  # the last Coder job asked about (the exit hint names it)
        self.last: Any = None
        self.applied: str | None = None
        self.images: list[str] = []  # `duckflow chat --image FILE`: sent with the next message
        self.looked: Any = None  # the answer to a message with images (orchestra.look.Looked)

    def _approval_events(self, chunk: Any) -> None:
        """The companion's approvals (CHAT / CODE routes) in the same event log as the orchestra's (§7.3)."""
        if getattr(chunk, "type", "") != "approval":
            return
        from datetime import UTC, datetime

        d = chunk.data
        now = datetime.now(UTC).isoformat(timespec="milliseconds")
        route = getattr(self.last.decision, "primary_route", None) if self.last is not None else None
        if d.phase == "request":
            req = d.request or {}
            self.orch.emit("approval.requested", job_id=d.job_id, approval_status="pending",
                           approval_requested_at=now, initial_route=route, final_route=route,
                           risk=req.get("risk"), coder_output={"intent": str(req.get("intent", ""))[:300]},
                           source="companion")
            return
        by = d.by or ""
        kind, status = (("approval.auto_approved", "auto_approved") if by.startswith("auto") else
                        ("approval.granted", "granted")) if d.granted else ("approval.denied", "denied")
        self.orch.emit(kind, job_id=d.job_id, approval_status=status, approval_decided_at=now, approver=by,
                       initial_route=route, final_route=route, source="companion")

    def _print(self, text: str, style: str = "") -> None:
        from rich.text import Text

        if self.quiet:
            return
        self.console.print(Text(text, style=style))

    async def send(self, text: str, images: list[str] | None = None, *, say_refusal: bool = True) -> str | None:
        """The companion's text, or None when the orchestra handled the message (or its images)."""
        images = list(images or self.images)
        self.images = []
        turn = await self.orch.handle(text, images=images or None)
        self.last = turn
        if turn.declaration:
            self._print(f"» {turn.declaration}", "bold magenta")
        if turn.action == "companion":
            model = getattr(self.session, "model", None)
            if turn.decision.flags.local_only and not getattr(model, "is_local", True):
                # seed 003 §7: no cloud call while /local is on, whichever role would answer
                self._print(f"ℹ local-only mode is on and the companion's model {getattr(model, 'name', '?')} is a "
                            "cloud model, so nothing was sent. Send /cloud to allow it, or set a local model "
                            "(routing.llm.chat_model).", "yellow")
                return None
            # seed 003: the Chat role's Ollama model is checked before each message (cheap, cached)
            await self.orch.roles.health.ensure(model)
            if images:
                await self._look(turn.text or text, say_refusal)
                return None
            return turn.text
        self._remember(text, turn)
        if turn.action == "notice":
            self._print(f"ℹ {turn.text}", "yellow")
        elif turn.action == "approval":
            self.pending_job = self.last_job = turn.job_id
            self._print(turn.text, "yellow")
            self._show_patch(turn.job_id)
            self._print("answer: yes / no", "yellow")
        else:
            from rich.panel import Panel
            from rich.text import Text

            title = f"{self.orch.roles.alias('worker')} · {turn.loop.final_route}" if turn.loop else "duckflow"
            if not self.quiet:
                self.console.print(Panel(Text(turn.text), title=Text(title), border_style="green"))
        return None

    async def _look(self, text: str, say_refusal: bool) -> None:
        from duckflow.orchestra.look import answer_with_images

        self.looked = looked = await answer_with_images(self.session, self.orch, text)
        if looked.ok and not self.quiet:
            from rich.panel import Panel
            from rich.text import Text

            self.console.print(Panel(Text(looked.text), title=Text("duckflow · image"), border_style="green"))
        elif not looked.ok and say_refusal:
            self._print(f"ℹ {looked.text}", "yellow")

    def _remember(self, text: str, turn: Any) -> None:
        """One person, one session, one state: what a Worker / Coder / the router answered joins the
        companion's exchanges, so the next CHAT or CODE message sees it."""
        owner = getattr(self.session, "owner", None)
        if owner is None:
            return
        route = turn.loop.final_route if turn.loop is not None else turn.decision.primary_route
        reply = f"[{route}] {turn.text}"
        owner.change(f"orchestra {route} reply", lambda st: st.add_exchange(text, reply))

    def _show_patch(self, job_id: str | None) -> None:
        """The Coder's plan and diff (first 60 lines) so the person sees what they approve."""
        job = self.orch.state.job(job_id) if job_id else None
        if job is None or self.quiet:
            return
        from rich.syntax import Syntax

        proposal = job["proposal"]
        self._print(f"plan: {proposal.get('plan', '')}", "bold")
        lines = str(proposal.get("patch", "")).splitlines()
        shown = "\n".join(lines[:60]) + (f"\n… {len(lines) - 60} more lines" if len(lines) > 60 else "")
        self.console.print(Syntax(shown, "diff", theme="ansi_dark", word_wrap=True))

    async def answer(self, text: str, *, by: str = "user (chat)") -> bool:
        """A yes/no for the pending Coder job; False when the text is neither (ask again)."""
        low = text.strip().lower()
        if self.pending_job is None or low not in YES | NO:
            return False
        job, self.pending_job = self.pending_job, None
        self.applied = await self.orch.answer(job, low in YES, approver=by)
        self._print(self.applied, "green" if low in YES else "yellow")
        return True

    def auto_answer(self, *, by: str) -> None:
        """`duckflow run --auto-approve-workspace`: the gate auto-approves the Coder job when its scope
        covers it (never a hard-required one); the Worker then applies it."""
        if self.pending_job is None:
            return
        from duckflow.orchestra.coder import CoderFlow

        got = self.orch.coder.auto_approve(self.pending_job, by=by, session_id=self.orch.session_id)
        if isinstance(got, str):
            self._print(f"job {self.pending_job} still waits for a person: {got}", "yellow")
            return
        self.pending_job = None
        self.applied = CoderFlow._applied_text(got)
        self._print(self.applied, "green")

    def outcome(self) -> OrchestraOutcome:
        """How `duckflow run` reports a message the orchestra handled."""
        turn = self.last
        if turn is None and self.applied is not None:  # a resumed Coder job
            return OrchestraOutcome("Applied" in self.applied, "done", self.applied)
        if turn is None and self.pending_job is not None:
            return OrchestraOutcome(False, "approval", f"job {self.pending_job[:8]} waits for approval")
        if turn is None:
            return OrchestraOutcome(False, "stopped", "nothing was routed")
        if self.looked is not None:
            return OrchestraOutcome(self.looked.ok, "done" if self.looked.ok else "stopped", self.looked.text)
        if turn.action == "approval":
            if self.applied is not None:
                return OrchestraOutcome("Applied" in self.applied, "done", self.applied)
            return OrchestraOutcome(False, "approval", turn.text)
        if turn.loop is not None:
            reason = turn.loop.stop_reason
            ending = {"done": "done", "need_user_confirmation": "input"}.get(reason, "stopped")
            return OrchestraOutcome(reason == "done", ending, turn.text, turn.loop.worker_calls)
        if turn.failed:  # e.g. /code2 with no Coder2 model: said, and `duckflow run` exits 1
            return OrchestraOutcome(False, "stopped", turn.text)
        return OrchestraOutcome(turn.action != "notice" or not turn.decision.refused,
                                "done" if not turn.decision.refused else "stopped", turn.text)

    def waiting_coder_job(self) -> str | None:
        """This session's newest Coder job not applied yet (it waits, or was answered elsewhere)."""
        row = self.orch.state.conn.execute(
            "SELECT job_id FROM coder_jobs WHERE session_id=? AND status='pending' ORDER BY created_at DESC LIMIT 1",
            (self.session.state.session_id,)).fetchone()
        return str(row[0]) if row else None

    async def resume_coder_job(self, job_id: str) -> None:
        """`duckflow run --resume`: a Coder job granted with `duckflow approvals grant` is applied now
        (logged as approval.granted, then the Worker's result); a denied one is closed; a pending
        one waits again (`pending_job`)."""
        from duckflow.orchestra.coder import CoderFlow

        current = self.orch.coder.gate.get(job_id)
        self.last_job = job_id
        if current.status == "pending":
            self.pending_job = job_id
            self._print(f"The change of job {job_id[:8]} still waits for your approval.", "yellow")
            self._show_patch(job_id)
            return
        decision = getattr(current, "decision", None)
        by = getattr(decision, "by", None) or "elsewhere (duckflow approvals)"
        report = self.orch.coder.decide(job_id, current.status in ("granted", "auto_approved"), approver=by,
                                        session_id=self.orch.session_id)
        self.applied = CoderFlow._applied_text(report)
        self._print(self.applied, "green" if report.get("ok") else "yellow")

    def close(self) -> None:
        self.orch.state.close()
