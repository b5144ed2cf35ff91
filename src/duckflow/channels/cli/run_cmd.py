"""`duckflow run "TASK"`: one task, end to end, non-interactive; the exit code says how it ended.

Exit codes: 0 the task reached DONE; 1 it stopped (needs input, no progress, turn limit,
model failure, token budget); 4 it waits for an approval (answer with `duckflow approvals
grant JOB`, then `duckflow run --resume ...`, or use `duckflow chat`); 130 cancelled with
Ctrl-C (the state is kept: `duckflow run --resume` continues). The chunks are rendered live
by `render.Renderer`, which `duckflow chat` shares.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.markup import escape

from duckflow.channels.cli.common import add_model_options, add_workspace, print_json
from duckflow.channels.cli.render import Renderer, clean

EXIT_OK, EXIT_STOPPED, EXIT_APPROVAL, EXIT_CANCELLED = 0, 1, 4, 130
__all__ = ["Renderer", "configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("task", nargs="?", help="what to do (omit with --resume to continue)")
    add_workspace(parser)
    add_model_options(parser)
    parser.add_argument("--auto-approve-workspace", action="store_true",
                        help="approve writes and commands inside the workspace for this run, "
                             "recorded as auto-approved (deletes, moves, destructive commands, "
                             "dangerous extensions and high-risk files still wait for a person)")
    parser.add_argument("--session", help="continue this session id")
    parser.add_argument("--resume", action="store_true", help="continue the workspace's latest session")
    parser.add_argument("--max-turns", type=int, default=12, help="stop after this many turns (default 12)")
    parser.add_argument("--json", action="store_true", help="print one JSON object at the end")
    parser.add_argument("--debug", action="store_true", help="also show refused transitions and notices")


def _outcome_json(outcome: Any, opened: Any) -> dict[str, Any]:
    s = opened.session.state
    return {
        "ok": outcome.success, "ending": outcome.ending, "message": outcome.message,
        "turns": outcome.turns, "session_id": s.session_id, "step": s.step.value,
        "status": s.status.value, "model": opened.model_name, "codec": opened.codec_name,
        "pending": s.pending_job if s.pending_gate else None,
        "files_created": s.memory.files_created,
    }


def _ending_line(outcome: Any, workspace: str) -> str:
    """How the run ended, in one line; the final reply is already shown above, so not repeated."""
    turns = f"{outcome.turns} turn{'s' if outcome.turns != 1 else ''}"
    if outcome.ending == "done":
        return f"done ({turns})"
    if outcome.ending == "input":
        return f"stopped after {turns}: the companion needs you (see above); continue with `duckflow chat -w {workspace}`"
    return f"{outcome.ending}: {outcome.message.splitlines()[0] if outcome.message else ''}"


RESUMES_GC = True  # collecting resumes after the first turn (main._dispatch leaves it paused)


def run(args: argparse.Namespace) -> int:
    from duckflow._gc import pause_for_startup

    started = pause_for_startup()  # collecting resumes (what exists frozen) once the session is set up
    try:
        return _run(args, started)
    finally:
        started()  # on every way out, an error before the set-up included


def _run(args: argparse.Namespace, started: Callable[[], None]) -> int:
    import asyncio

    from duckflow.companion.factory import open_session
    from duckflow.companion.task import auto_answer, drive
    from duckflow.errors import DuckflowError

    if not args.task and not (args.resume or args.session):
        raise DuckflowError("no task given", hint='duckflow run "what to do" [--workspace DIR]')
    workspace = Path(args.workspace)
    from duckflow.channels.cli.routed import chat_model_name

    opened = open_session(workspace, model_name=args.model or chat_model_name(workspace), session_id=args.session,
                          resume=args.resume, codec=args.codec, mode=args.mode)
    renderer = Renderer(debug=args.debug, quiet=args.json, spinner=True)
    session = opened.session
    session.chunks.subscribe(renderer)
    if not args.json:
        renderer.console.print(
            f"[dim]duckflow run · workspace {workspace.resolve()} · model {opened.model_name} · "
            f"codec {opened.codec_name} · {'single-call' if session.mode == 'single' else 'two-call'} · session {session.state.session_id}"
            f"{' (resumed)' if opened.resumed else ''}[/]"
        )

    if not args.task and session.state.step.value == "DONE" and not session.state.pending_gate:
        renderer.console.print(f"[green]nothing to continue: the last task is done[/] ({escape(session.state.task or '-')}). "
                               f"Give a new one: `duckflow run \"TASK\" --resume -w {args.workspace}`")
        opened.close()
        return EXIT_OK
    from duckflow.channels.cli.routed import RoutedInput

    routed = RoutedInput(opened, renderer.console, quiet=args.json)
    if args.auto_approve_workspace:
        _say_no_sandbox(session.runner.sandbox)

    def first_turn_over(chunk: Any) -> None:
        # collecting resumes once the first companion turn has ended: by then the modules a
        # turn needs (prompts, the router, the sanitizer's patterns) are loaded, and freezing
        # them keeps ~35 collections (~5 ms) from walking them while they load
        if getattr(chunk, "type", "") in ("reply", "approval", "done", "error"):
            started()
            stop_watching()

    stop_watching = session.chunks.subscribe(first_turn_over)

    async def go() -> Any:
        if session.state.pending_gate and not args.task:
            resumed = await session.resume_pending()
            job_id = session.state.pending_job["job_id"] if session.state.pending_job else "?"
            if resumed is None and args.auto_approve_workspace:
                why = auto_answer(session, job_id)  # recorded as auto-approved, never as a person
                if why is not None:
                    raise DuckflowError(f"job {job_id} still waits for a person: {why}",
                                        hint="duckflow approvals grant JOB, then run again")
                resumed = await session.resume_pending()
            if resumed is None:
                raise DuckflowError(
                    f"job {session.state.pending_job['job_id'] if session.state.pending_job else '?'} "
                    "still waits for approval", hint="duckflow approvals grant JOB, then run again")
            else:
                async def done() -> Any:
                    return resumed
                first = done()
        elif args.task:
            body = await routed.send(args.task)  # the seed 003 router in front of the companion
            if body is None:
                if routed.pending_job and args.auto_approve_workspace:
                    routed.auto_answer(by="auto-approve-workspace (duckflow run)")
                return routed.outcome()
            first = session.handle_message(body)
        else:
            first = session.continue_task(observed=True)
        try:
            return await drive(session, first, max_turns=args.max_turns,
                               auto_approve_workspace=args.auto_approve_workspace)
        except asyncio.CancelledError:
            session.note_cancelled()  # Ctrl-C: the step stops, the state stays
            raise

    cancelled = False
    result: list[Any] = []

    async def main() -> None:
        # the outcome leaves through `result`, not as the task's result: on its way out
        # asyncio.run formats the main task's repr (signal.getsignal on a partial holding the
        # task), and a finished task's repr renders its result, the whole outcome: ~4 ms
        result.append(await go())

    try:
        asyncio.run(main())
        outcome = result[0]
    except KeyboardInterrupt:
        cancelled = True
    finally:
        from duckflow.store.sqlite import close_all

        renderer.stop_spinner()
        from duckflow.channels.cli import fastexit

        # the stores close together; with the fast exit, their connections stay open for it
        close_all(routed.close, opened.close, process_ends=fastexit.armed())
    if cancelled:
        renderer.console.print(f"[yellow]cancelled during {session.state.step.value}; the session is kept. "
                               f"Continue with `duckflow run --resume -w {args.workspace}` "
                               "or `duckflow chat`.[/]")
        return EXIT_CANCELLED
    if args.json:
        print_json(_outcome_json(outcome, opened))
    else:
        style = "bold green" if outcome.success else "bold yellow"
        renderer.console.print(f"[{style}]{escape(clean(_ending_line(outcome, args.workspace)))}[/]")
        if outcome.ending == "approval":
            print("answer with `duckflow approvals grant JOB` (or deny), then "
                  f"`duckflow run --resume -w {args.workspace}`; or use `duckflow chat`", file=sys.stderr)
    if outcome.success:
        return EXIT_OK
    return EXIT_APPROVAL if outcome.ending == "approval" else EXIT_STOPPED


def _say_no_sandbox(sandbox: str) -> None:
    """Once per run, on stderr: without a sandbox only listed commands are auto-approved."""
    import sys

    from duckflow.gate.allowlist import no_sandbox_notice

    notice = no_sandbox_notice(sandbox)
    if notice:
        print(notice, file=sys.stderr)
