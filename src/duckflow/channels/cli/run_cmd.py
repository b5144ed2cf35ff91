"""`duckflow run "TASK"`: one task, end to end; on a terminal it asks for approvals inline; the exit code says how it ended.

Exit codes (docs/cli.md): 0 the task is done; 1 it stopped (needs input, no progress, turn
limit, model failure, token budget); 4 it waits for an approval (not on a terminal, or
--no-input: answer with `duckflow approvals grant ID`, then `duckflow run --resume`); 130
cancelled with Ctrl-C (the state is kept: `duckflow run --resume` continues). On a terminal an
approval is asked where the person is: y / n / e(dit) / a(lways for this session), and after
n "what should it do instead?". The chunks are rendered live by `render.Renderer`, which
`duckflow chat` shares.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.markup import escape

from duckflow.channels.cli.common import add_model_options, add_workspace, model_arg, print_json
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
    parser.add_argument("--image", action="append", metavar="FILE",
                        help="send an image (PNG, JPEG, GIF, WebP) with the task to a vision model; repeatable")
    parser.add_argument("--session", help="continue this session id")
    parser.add_argument("--resume", action="store_true", help="continue the workspace's latest session")
    parser.add_argument("--max-turns", type=int, default=12, help="stop after this many turns (default 12)")
    parser.add_argument("--json", action="store_true", help="print one JSON object at the end")
    parser.add_argument("--no-input", action="store_true",
                        help="never ask (an approval ends the run with exit 4), even on a terminal")
    parser.add_argument("--verbose", "-v", action="store_true",
                        help="also show the protocol text, step moves, plans and tool results")
    parser.add_argument("--debug", action="store_true", help="show everything (refused moves, tokens, notices)")


def _outcome_json(outcome: Any, opened: Any) -> dict[str, Any]:
    s = opened.session.state
    return {
        "ok": outcome.success, "ending": outcome.ending, "message": outcome.message,
        "turns": outcome.turns, "session_id": s.session_id, "step": s.step.value,
        "status": s.status.value, "model": opened.model_name, "codec": opened.codec_name,
        "pending": s.pending_job if s.pending_gate else None,
        "files_created": s.memory.files_created,
        # the ending's kind (done | not_done | not_verified) and its evidence: the check, what the
        # task expected, what the check printed
        "result": outcome.result.to_dict() if getattr(outcome, "result", None) else None,
    }


def _ending_line(outcome: Any, workspace: str) -> str:
    """How the run ended, in one plain line; the final reply is already shown above, so not repeated."""
    from duckflow.channels.present import ending_sentence

    result = getattr(outcome, "result", None)
    if result is not None and result.kind == "not_verified" and outcome.ending == "done":
        return result.said
    if outcome.ending == "done":
        return "Done."
    if outcome.ending == "input" and (outcome.message or "").startswith("Not sent:"):
        return ""  # the line above says why and what to do (a cloud model answers only coding)
    if outcome.ending == "input" and "model call failed" in (outcome.message or ""):
        # (chat would fail the same way): the model first, then the same task goes on
        return (f"Stopped: the model did not answer (see above); the task is kept. Once it runs: "
                f"`duckflow run --resume -w {workspace}`.")
    if outcome.ending == "input":
        return f"Stopped: the companion needs you (see above). Answer with `duckflow chat -w {workspace}`."
    if outcome.ending == "approval":
        return "Waiting for your approval."
    if outcome.ending == "stopped":
        return "Stopped (see above)."
    return ending_sentence(outcome.ending, outcome.message)


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
    from duckflow.companion.task import auto_answer, drive, outcome_of
    from duckflow.errors import DuckflowError

    if not args.task and not (args.resume or args.session):
        raise DuckflowError("no task given", hint='duckflow run "what to do" [--workspace DIR]')
    workspace = Path(args.workspace)
    opened = open_session(workspace, model_name=model_arg(args.model), session_id=args.session,
                          resume=args.resume, codec=args.codec, mode=args.mode)
    renderer = Renderer(debug=args.debug, verbose=args.verbose, quiet=args.json, spinner=True)
    session = opened.session
    session.chunks.subscribe(renderer)
    renderer.hold_cards = bool(args.auto_approve_workspace)
    interactive = not args.json and not args.no_input and sys.stdin.isatty() and sys.stdout.isatty()
    if not args.json:
        extra = (f" · codec {opened.codec_name} · {'single-call' if session.mode == 'single' else 'two-call'}"
                 f" · session {session.state.session_id}") if renderer.level != "person" else ""
        renderer.console.print(
            f"[dim]duckflow run · {escape(str(workspace.resolve()))} · {escape(opened.model_name)}{extra}"
            f"{' (resumed)' if opened.resumed else ''}[/]"
        )

    from duckflow.channels.cli.routed import CliConversation

    talk = CliConversation(opened, max_turns=args.max_turns)
    if not args.json:
        if talk.speakers():
            renderer.console.print(f"[dim]{escape(talk.speakers())}[/]")
        for note in talk.notes:
            renderer.console.print(f"[dim yellow]note: {escape(note)}[/]")
    if args.auto_approve_workspace:
        _say_no_sandbox(session.runner.sandbox)
    coder_job = talk.waiting_coder_job() if not args.task else None
    if not args.task and session.state.step.value == "DONE" and not session.state.pending_gate and not coder_job:
        renderer.console.print(f"[green]Nothing to continue: the last task is done[/] ({escape(session.state.task or '-')}). "
                               f"Give a new one: `duckflow run \"TASK\" -w {args.workspace}`")
        talk.close()
        opened.close()
        return EXIT_OK

    def first_turn_over(chunk: Any) -> None:
        # collecting resumes once the first companion turn has ended: by then the modules a
        # turn needs (prompts, the router, the sanitizer's patterns) are loaded, and freezing
        # them keeps ~35 collections (~5 ms) from walking them while they load
        if getattr(chunk, "type", "") in ("reply", "approval", "done", "error"):
            started()
            stop_watching()

    stop_watching = session.chunks.subscribe(first_turn_over)
    from duckflow.channels.cancelled import watch_chunk
    from duckflow.workspace.turnchanges import TurnChanges

    changes = TurnChanges(str(workspace))  # what the run changed: a Ctrl-C says it truly
    session.chunks.subscribe(lambda chunk: watch_chunk(changes, chunk))

    always = [False]

    async def ask(outcome: Any) -> Any:
        """On a terminal: the approval asked inline; the next turn, or None to stop here."""
        from duckflow.channels.cli.answers import (
            CHANGE,
            INSTEAD,
            QUESTION,
            auto_answer_pending,
            decide,
            understand,
        )

        if always[0] and auto_answer_pending(session) is None:
            return session.resume_pending()
        renderer.flush()  # the card the run stopped at
        renderer.stop_spinner()
        while True:
            answer, words = understand(renderer.console.input(f"[bold yellow]{QUESTION}[/] › ")) or (None, "")
            if answer == "details":
                job = session.state.pending_job or {}
                renderer.approval(job.get("request") or {}, job.get("job_id"), call=job.get("call"), details=True)
                continue
            if answer is not None:
                break
            renderer.console.print("Type y, n, e or a, or say what to do instead.")
        if answer in ("no", "edit") and not words:
            words = renderer.console.input(f"[bold]{INSTEAD if answer == 'no' else CHANGE}[/] › ")
        always[0] = always[0] or answer == "always"
        return decide(session, answer, words, by="user (duckflow run)")

    async def keep_asking(outcome: Any) -> Any:
        """On a terminal: each companion approval, and each question the model asks (with its
        options, shown above), asked inline; the task driven on after the answer."""
        while interactive:
            if outcome.ending == "approval" and session.state.pending_gate:
                outcome = await drive(session, await ask(outcome), max_turns=args.max_turns)
            elif outcome.ending == "input" and session.state.open_questions:
                renderer.flush()
                renderer.stop_spinner()
                said = renderer.console.input("[bold yellow]Your answer[/] › ").strip()
                if not said:
                    break
                outcome = await drive(session, session.handle_message(said), max_turns=args.max_turns,
                                      auto_approve_workspace=args.auto_approve_workspace)
            else:
                break
        return outcome

    async def coder_answer(outcome: Any) -> Any:
        """On a terminal: a yes / no on the Coder job that waits (the card is shown above)."""
        from duckflow.channels.cli.answers import CODER_QUESTION, INSTEAD, understand

        while interactive and talk.coder_job:
            renderer.flush()
            renderer.stop_spinner()
            answer, words = understand(renderer.console.input(f"[bold yellow]{CODER_QUESTION}[/] › ")) or (None, "")
            if answer in ("yes", "always"):
                outcome = await outcome_of(talk.answer_coder(True, by="user (duckflow run)"))
            elif answer in ("no", "edit"):
                words = words or renderer.console.input(f"[bold]{INSTEAD}[/] › ").strip()
                outcome = await outcome_of(talk.answer_coder(False, by="user (duckflow run)", note=words or None))
            else:
                renderer.console.print("Type y or n.")
        return outcome

    async def go() -> Any:
        if coder_job is not None:  # a Coder job answered elsewhere (`duckflow approvals grant`): apply it
            return await coder_answer(await outcome_of(talk.resume_coder_job(
                coder_job, auto_approve_workspace=args.auto_approve_workspace)))
        if session.state.pending_gate and not args.task:
            resumed = await session.resume_pending()
            job_id = session.state.pending_job["job_id"] if session.state.pending_job else "?"
            if resumed is None and args.auto_approve_workspace:
                why = auto_answer(session, job_id)  # recorded as auto-approved, never as a person
                if why is not None:
                    raise DuckflowError(f"job {job_id[:8]} still waits for a person: {why}",
                                        hint=f"duckflow approvals grant {job_id[:8]}, then run again")
                resumed = await session.resume_pending()
            if resumed is None and not interactive:
                raise DuckflowError(f"job {job_id[:8]} still waits for your approval",
                                    hint=f"duckflow approvals grant {job_id[:8]}, then run again")
            if resumed is None:
                renderer.approval((session.state.pending_job or {}).get("request") or {}, job_id,
                                  call=(session.state.pending_job or {}).get("call"))
                first = await ask(None)
            else:
                async def done() -> Any:
                    return resumed
                first = done()
        elif args.task:  # through the front door: the router, then the role the message is for
            outcome = await outcome_of(talk.stream(args.task, getattr(args, "image", None), task=True,
                                                   auto_approve_workspace=args.auto_approve_workspace))
            if talk.coder_job:
                return await coder_answer(outcome)
            return await keep_asking(outcome)
        else:
            first = session.continue_task(observed=True)
        try:
            return await keep_asking(await drive(session, first, max_turns=args.max_turns,
                                                 auto_approve_workspace=args.auto_approve_workspace))
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

        renderer.flush()
        renderer.stop_spinner()
        from duckflow.channels.cli import fastexit

        # the stores close together; with the fast exit, their connections stay open for it
        close_all(talk.close, opened.close, process_ends=fastexit.armed())
    if cancelled:
        return _cancelled(args, renderer, changes, opened)
    if args.json:
        print_json(_outcome_json(outcome, opened))
    else:
        style = "bold green" if outcome.success else "bold yellow"
        said = clean(_ending_line(outcome, args.workspace))
        # a stop the stream already said, or the reply's own last words, are not said twice
        if said and said != renderer.last_stop and not renderer.last_prose.endswith(" ".join(said.split())):
            renderer.console.print(f"[{style}]{escape(said)}[/]")
        if outcome.ending == "approval":
            job = _waiting_job(session, talk)
            print(f"next: `duckflow approvals grant {job}` (or `deny {job}`), then "
                  f"`duckflow run --resume -w {args.workspace}`; or answer in `duckflow chat`", file=sys.stderr)
    if outcome.success:
        return EXIT_OK
    return EXIT_APPROVAL if outcome.ending == "approval" else EXIT_STOPPED


def _cancelled(args: argparse.Namespace, renderer: Any, changes: Any, opened: Any) -> int:
    """Ctrl-C: the run ends as cancelled, with the line that says what it changed (exit 130)."""
    from duckflow.channels.cancelled import cancelled_line

    changed = changes.files()
    said = cancelled_line(changed, undo="`duckflow undo`")
    go_on = f"Continue with `duckflow run --resume -w {args.workspace}` or `duckflow chat`."
    if args.json:
        s = opened.session.state
        print_json({"ok": False, "ending": "cancelled", "message": said, "session_id": s.session_id,
                    "step": s.step.value, "status": s.status.value, "model": opened.model_name,
                    "result": {"kind": "cancelled", "said": said, "files_changed": list(changed.paths),
                               "undos": changed.undos, "commands_run": len(changed.commands)}})
        return EXIT_CANCELLED
    renderer.cut_short()  # on a fresh line, not after the half-written answer
    renderer.console.print(f"[yellow]{escape(said)}[/] {escape(go_on)}")
    return EXIT_CANCELLED


def _waiting_job(session: Any, talk: Any) -> str:
    """The short id of the job that waits (the companion's, else the Coder's)."""
    job = session.state.pending_job if session.state.pending_gate else None
    full = (job or {}).get("job_id") or talk.coder_job or talk.last_job or "?"
    return str(full)[:8]


def _say_no_sandbox(sandbox: str) -> None:
    """Once per run, on stderr: without a sandbox only listed commands are auto-approved."""
    import sys

    from duckflow.gate.allowlist import no_sandbox_notice

    notice = no_sandbox_notice(sandbox)
    if notice:
        print(notice, file=sys.stderr)
