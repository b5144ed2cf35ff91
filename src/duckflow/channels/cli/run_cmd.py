"""`duckflow run "TASK"`: one task, end to end, non-interactive; the exit code says how it ended.

Exit codes: 0 the task reached DONE; 1 it stopped (needs input, no progress, turn limit,
model failure); 4 it waits for an approval (answer with `duckflow approvals grant JOB`, then
`duckflow run --resume ...`, or use `duckflow chat`). Also holds the event renderer that
`duckflow chat` shares.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_STOPPED, EXIT_APPROVAL = 0, 1, 4


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("task", nargs="?", help="what to do (omit with --resume to continue)")
    parser.add_argument("--workspace", "-w", default=".", help="the workspace folder (default: .)")
    parser.add_argument("--model", "-m", help="provider:model, or scripted:demo (no model needed)")
    parser.add_argument("--auto-approve-workspace", action="store_true",
                        help="approve writes and commands inside the workspace for this run "
                             "(hard-required operations such as deletes still stop the run)")
    parser.add_argument("--session", help="continue this session id")
    parser.add_argument("--resume", action="store_true", help="continue the workspace's latest session")
    parser.add_argument("--max-turns", type=int, default=12, help="stop after this many turns (default 12)")
    parser.add_argument("--json", action="store_true", help="print one JSON object at the end")
    parser.add_argument("--debug", action="store_true", help="also show refused transitions and notices")


class Renderer:
    """Prints companion events with rich: thoughts, plans, diffs, results, approvals."""

    def __init__(self, console: Any = None, *, debug: bool = False, quiet: bool = False,
                 spinner: bool = False) -> None:
        from rich.console import Console

        self.console = console or Console(highlight=False)
        self.debug = debug
        self.quiet = quiet
        self.spinner = spinner and self.console.is_terminal
        self._status: Any = None

    def stop_spinner(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def __call__(self, ev: Any) -> None:
        if self.quiet:
            return
        self.stop_spinner()
        if self.spinner and ev.kind in ("thinking", "tool_call"):
            label = ev.text if ev.kind == "thinking" else f"running {ev.text}"
            self._status = self.console.status(label, spinner="dots")
            self._status.start()
        from rich.panel import Panel
        from rich.text import Text

        c = self.console
        k = ev.kind
        if k == "thinking":
            if self.debug:
                c.print(Text(f"… {ev.text}", style="dim"))
        elif k == "decision":
            d = ev.data
            c.print(Text(f"💭 {ev.text}  [{d.get('step')} · {d.get('prompt_pattern') or d.get('pattern')}]",
                         style="italic cyan"))
        elif k == "transition":
            c.print(Text(f"↪ {ev.text}", style="cyan"))
        elif k == "refused":
            if self.debug:
                c.print(Text(f"⛔ {ev.text}", style="yellow"))
        elif k == "plan":
            acts = ev.data.get("actions") or []
            body = ev.text + ("\n\nactions:\n" + "\n".join(f"- {a}" for a in acts) if acts else "")
            c.print(Panel(body, title=f"plan {ev.data.get('plan_id', '')}", border_style="blue"))
        elif k == "tool_call":
            c.print(Text(f"→ {ev.text}", style="bold"))
        elif k == "proposed":
            c.print(Text(f"◇ proposed, not run: {ev.text}", style="magenta"))
        elif k == "approval":
            self.approval(ev.data.get("request") or {}, ev.data.get("job_id"))
        elif k == "tool_result":
            style = "green" if ev.data.get("status") == "ok" else "red"
            c.print(Text(f"{'✓' if style == 'green' else '✗'} {ev.text}", style=style))
        elif k == "reply":
            c.print(Panel(Text(ev.text), title="duckflow", border_style="green"))
        elif k == "notice":
            if self.debug or "could not" in ev.text or "auto-approved" in ev.text:
                c.print(Text(f"ℹ {ev.text}", style="dim yellow"))
        elif k == "error":
            c.print(Text(f"error: {ev.text}", style="bold red"))

    def approval(self, request: dict[str, Any], job_id: Any, *, details: bool = False) -> None:
        from rich.panel import Panel
        from rich.syntax import Syntax

        lines = [
            f"[bold]job[/] {job_id}   risk: {request.get('risk', '?')}",
            f"[bold]intent[/]: {request.get('intent', '')}",
            f"[bold]why[/]: {request.get('rationale', '')}",
            f"[bold]impact[/]: {request.get('impact', '')}",
            f"[bold]alternatives[/]: {request.get('alternatives', '')}",
        ]
        if request.get("hard_required"):
            lines.append(f"[bold red]a person must decide[/]: {', '.join(request['hard_required'])}")
        if details:
            lines.append(f"[bold]affected[/]: {', '.join(request.get('affected') or [])}")
            lines.append(f"[bold]reversible[/]: {request.get('reversible')}  {request.get('rollback', '')}")
        self.console.print(Panel("\n".join(lines), title="approval needed", border_style="yellow"))
        diff = request.get("diff_preview") or ""
        if diff:
            shown = diff if details else "\n".join(diff.splitlines()[:40])
            self.console.print(Syntax(shown, "diff", theme="ansi_dark", word_wrap=True))


def _outcome_json(outcome: Any, opened: Any) -> dict[str, Any]:
    s = opened.session.state
    return {
        "ok": outcome.success, "ending": outcome.ending, "message": outcome.message,
        "turns": outcome.turns, "session_id": s.session_id, "step": s.step.value,
        "status": s.status.value, "model": opened.model_name, "codec": opened.codec_name,
        "pending": s.pending_job if s.pending_gate else None,
        "files_created": s.memory.files_created,
    }


def run(args: argparse.Namespace) -> int:
    import asyncio

    from duckflow.companion.factory import open_session
    from duckflow.companion.task import drive
    from duckflow.errors import DuckflowError

    if not args.task and not (args.resume or args.session):
        raise DuckflowError("no task given", hint='duckflow run "what to do" [--workspace DIR]')
    workspace = Path(args.workspace)
    opened = open_session(workspace, model_name=args.model, session_id=args.session,
                          resume=args.resume)
    renderer = Renderer(debug=args.debug, quiet=args.json, spinner=True)
    session = opened.session
    session.events.subscribe(renderer)
    if not args.json:
        renderer.console.print(
            f"[dim]duckflow run · workspace {workspace.resolve()} · model {opened.model_name} · "
            f"codec {opened.codec_name} · session {session.state.session_id}"
            f"{' (resumed)' if opened.resumed else ''}[/]"
        )

    async def go() -> Any:
        if session.state.pending_gate and not args.task:
            resumed = await session.resume_pending()
            if resumed is None and args.auto_approve_workspace:
                first = session.answer_approval(True, by="auto-approve-workspace (duckflow run)")
            elif resumed is None:
                raise DuckflowError(
                    f"job {session.state.pending_job['job_id'] if session.state.pending_job else '?'} "
                    "still waits for approval", hint="duckflow approvals grant JOB, then run again")
            else:
                async def done() -> Any:
                    return resumed
                first = done()
        elif args.task:
            first = session.handle_message(args.task)
        else:
            first = session.continue_task(observed=True)
        return await drive(session, first, max_turns=args.max_turns,
                           auto_approve_workspace=args.auto_approve_workspace)

    try:
        outcome = asyncio.run(go())
    finally:
        renderer.stop_spinner()
        opened.close()
    if args.json:
        print(json.dumps(_outcome_json(outcome, opened), ensure_ascii=False))
    else:
        style = "bold green" if outcome.success else "bold yellow"
        renderer.console.print(f"[{style}]{outcome.ending}[/]: {outcome.message.splitlines()[0] if outcome.message else ''}")
        if outcome.ending == "approval":
            print("answer with `duckflow approvals grant JOB` (or deny), then "
                  f"`duckflow run --resume -w {args.workspace}`; or use `duckflow chat`", file=sys.stderr)
    if outcome.success:
        return EXIT_OK
    return EXIT_APPROVAL if outcome.ending == "approval" else EXIT_STOPPED
