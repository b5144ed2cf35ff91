"""`duckflow chat`: the companion REPL — a conversation, approvals inline, typing while a task runs.

Enter sends; Alt+Enter (or Esc then Enter) adds a new line. While the companion works, what
it waits on (thinking, writing with its token count, a command) sits in the bottom bar and the
prompt stays open (the dual loop): a question is answered at once, in parallel and read-only; a
correction reaches the task at its next step; "stop" / "wait" / 止めて / 待って pauses it
cleanly, "continue" / 続けて goes on. Ctrl-C or Esc cancels the running turn: what it wrote so
far stays, marked "(cancelled)", and one line says what it changed (channels/cancelled.py:
"Cancelled — nothing was changed", or the files and the /undo that takes them back). The chat's own commands (/undo, /redo, /diff,
/status, /model, /help …) are in channels/commands.py (the web page's too); an unknown /word is refused without a
model call. An approval is answered with y / n / e(dit) / a(lways for this session) / d(etails);
after n (or e) the next line says what to do instead and reaches the model with the denial.
Without a terminal (stdin piped) it reads one line at a time.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from rich.markup import escape

from duckflow.channels.cli.answers import (
    ALWAYS_BY,
    CHANGE,
    CODER_QUESTION,
    INSTEAD,
    QUESTION,
    understand,
)
from duckflow.channels.cli.common import add_model_options, add_workspace, model_arg
from duckflow.channels.cli.render import clean
from duckflow.channels.commands import (
    OWN,
    ROUTER,
    Changes,
    answer_command,
    command_arg,
    command_word,
    unknown,
)

SPIN = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def is_resume(text: str) -> bool:
    from duckflow.companion.sidechat import is_resume as resume

    return resume(text)


def configure(parser: argparse.ArgumentParser) -> None:
    add_workspace(parser)
    add_model_options(parser)
    parser.add_argument("--image", action="append", metavar="FILE",
                        help="send an image (PNG, JPEG, GIF, WebP) with your first message to a vision model; repeatable")
    parser.add_argument("--session", help="continue this session id")
    parser.add_argument("--new", action="store_true", help="start a new session (default: resume the latest)")
    parser.add_argument("--verbose", "-v", action="store_true",
                        help="also show the protocol text, step moves, plans and tool results")
    parser.add_argument("--debug", action="store_true", help="show everything (refused moves, tokens, notices)")


class Chat:
    def __init__(self, opened: Any, renderer: Any) -> None:
        from duckflow.companion.dualloop import DualLoop

        self.opened = opened
        self.session = opened.session
        self.talk: Any = None  # the front door: router, roles, companion (channels/cli/routed.py)
        self.render = renderer
        self.loop = DualLoop(self.session, on_done=self._done)
        self.activity = ""
        self.editing = ""  # after n / e: the next line says what to do instead ("no" or "edit")
        self.always = False  # "a": approve this session's workspace changes without asking
        self.changes = Changes(self.session.state.workspace)
        self.turn: Any = None  # the running turn's account of its changes (workspace/turnchanges.py)
        self.loop.on_start = self._turn_started

    def _turn_started(self) -> None:
        from duckflow.workspace.turnchanges import TurnChanges

        self.turn = TurnChanges(self.session.state.workspace or ".")

    def watch(self, chunk: Any) -> None:
        """Every chunk of the session: the running turn notes the commands it ran."""
        from duckflow.channels.cancelled import watch_chunk

        watch_chunk(self.turn, chunk)

    def cancelled(self) -> str:
        """The cancelled turn's line, true of what its checkpoints hold."""
        from duckflow.channels.cancelled import cancelled_line
        from duckflow.workspace.turnchanges import Changed

        return cancelled_line(self.turn.files() if self.turn is not None else Changed())

    @property
    def activity(self) -> str:
        return str(self.render.activity)

    @activity.setter
    def activity(self, value: str) -> None:
        self.render.activity = value

    def _done(self, outcome: Any, exc: BaseException | None) -> None:
        self.activity = ""
        c = self.render.console
        if self.session.corrections and outcome is not None and outcome.ending != "approval":
            asyncio.get_running_loop().call_soon(self._send_corrections)
        if exc is not None:
            c.print(f"[bold red]The task failed:[/] {escape(clean(str(exc)))}")
        elif outcome is None:
            if not self.loop.paused:
                self.render.cut_short()  # the partial reply ends marked "(cancelled)", on its own line
                c.print(f"[yellow]{escape(self.cancelled())}[/] [dim]Say \"continue\" to go on, "
                        "or tell me what to do instead.[/]")
        elif outcome.ending == "approval" and self.talk is not None and self.talk.coder_job:
            c.print(f"[yellow]{CODER_QUESTION}[/]")
        elif outcome.ending == "approval":
            if self.always and self._auto_answer():
                return
            c.print(f"[yellow]{QUESTION}[/]")
        elif outcome.ending not in ("done", "input"):
            from duckflow.channels.present import ending_sentence

            c.print(f"[yellow]{escape(clean(ending_sentence(outcome.ending, outcome.message)))}[/]")

    def _auto_answer(self) -> bool:
        """'always for this session': the next workspace change is approved without asking."""
        from duckflow.channels.cli.answers import auto_answer_pending

        why = auto_answer_pending(self.session)
        if why is not None:
            self.render.console.print(f"[yellow]This one needs you: {escape(why)}[/]")
            return False
        self.render.console.print(f"[dim]Approved ({ALWAYS_BY}).[/]")
        asyncio.get_running_loop().call_soon(lambda: self.loop._start(self._resume()))
        return True

    async def _resume(self) -> Any:
        resumed = await self.session.resume_pending()
        if resumed is None:  # answered elsewhere meanwhile: nothing to go on with here
            return await self.session.continue_task(observed=False)
        return resumed

    def _send_corrections(self) -> None:
        if self.session.corrections and not self.loop.busy and not self.session.state.pending_gate:
            text = self.session.take_corrections() or ""
            self.render.console.print(f"[dim]the task ended first; sending what you typed: {escape(text)}[/]")
            self.loop.start_message(text)

    def toolbar(self) -> str:
        import time

        partial = self.render.partial_view()
        if partial:  # the line being written, live (complete lines go to the scrollback)
            width = 200
            return " " + (partial if len(partial) < width else "…" + partial[-width:])

        if not self.loop.busy:
            s = self.session.state
            if self.talk is not None and self.talk.coder_job:
                return " type what it should do instead (Enter to just refuse)" if self.editing == "coder" \
                    else " the Coder's change waits: y / n · /help"
            return " approval waiting: y / n / e / a · /help" if s.pending_gate else " /help · /undo · Ctrl-D quits"
        frame = SPIN[int(time.monotonic() * 10) % len(SPIN)]
        activity = (self.activity or "working").rstrip("…")
        since = self.render.activity_since
        took = f" {time.monotonic() - since:.0f}s" if self.activity and since else ""
        last = self.render.window[-1].strip() if self.render.window else ""
        if last and not last.startswith("$ "):  # the last line of the file being written (a command: the status)
            return f" {frame} {activity}…{took}   {last[:120]}"
        return f" {frame} {activity}…{took}  (ask · correct · Esc or Ctrl-C cancels)"

    async def handle(self, text: str) -> bool:
        """One line from the person; False ends the chat."""
        text = text.strip()
        c = self.render.console
        if not text:
            return True
        if text in ("/quit", "/exit", ":q"):
            if self.loop.busy:
                await self.loop.cancel()
            return False
        word = command_word(text)
        if self.editing and not self.loop.busy and self.session.state.pending_gate:
            self._approval(text)
        elif word in ("help", "status", "model", "undo", "redo", "diff", "verbose", "debug"):
            self._simple(word, command_arg(text))
        elif word is not None and word not in OWN and word not in ROUTER:
            c.print(f"[yellow]{escape(unknown(word))}[/]")
        elif text.startswith("/constraint"):
            body = text[len("/constraint"):].strip()
            c.print(self.loop.add_constraint(body) if body else "usage: /constraint TEXT")
        elif text.startswith("/remember "):
            pattern = text[len("/remember "):].strip()
            self.session.owner.change("learned", lambda st: st.memory.learn(pattern))
            c.print(f"Remembered: {pattern}")
        elif text.startswith("/set "):
            key, _, value = text[len("/set "):].strip().partition(" ")
            if not key or not value:
                c.print("usage: /set KEY VALUE (e.g. /set style black)")
            else:
                self.session.owner.change(f"setting {key}",
                                          lambda st: st.memory.user_settings.__setitem__(key, value.strip()))
                c.print(f"Setting {key} = {value.strip()}")
        elif text == "/cancel":
            if not await self.loop.cancel():  # (a cancelled turn says so itself)
                c.print("Nothing is running.")
        elif text == "/resume" and not self.loop.busy:
            self.loop.start_continue()
        elif text == "/sessions":
            from duckflow.channels.cli import sessions_cmd

            sessions_cmd.run(argparse.Namespace(limit=10, json=False, delete=None))
        elif self.loop.busy:
            await self.loop.interject(text)
        elif self.session.state.pending_gate:
            self._approval(text)
        elif (self.loop.paused or self._unfinished()) and is_resume(text):
            self.loop.start_continue()
        elif self.talk is not None and self.talk.coder_job:
            self._coder_answer(text)
        elif self.talk is not None:
            self.loop.start_stream(self.talk.stream(text))
        else:
            self.loop.start_message(text)
        return True

    def _coder_answer(self, text: str) -> None:
        """y / n on the Coder's change; after n, the next line says what to do instead."""
        if self.editing == "coder":
            self.editing = ""
            self.loop.start_stream(self.talk.answer_coder(False, by="user (chat)", note=text.strip() or None))
            return
        answer, words = understand(text) or (None, "")
        if answer in ("yes", "always"):
            self.loop.start_stream(self.talk.answer_coder(True, by="user (chat)"))
        elif answer in ("no", "edit") and words:  # a free answer: a no with these words
            self.loop.start_stream(self.talk.answer_coder(False, by="user (chat)", note=words))
        elif answer in ("no", "edit"):
            self.editing = "coder"
            self.render.console.print(f"[bold]{INSTEAD}[/]")
        else:
            self.render.console.print(f"A change waits for your approval: {CODER_QUESTION}", markup=False)

    def _simple(self, word: str, arg: str = "") -> None:
        """The commands that answer at once, without the model (channels/commands.py: as on the web)."""
        c = self.render.console
        if word in ("verbose", "debug"):
            on = self.render.level == "person"
            self.render.level = ("debug" if word == "debug" else "verbose") if on else "person"
            c.print(f"{'Showing' if on else 'Hiding'} the engine's details.")
            return
        said = answer_command(word, self.session.state, changes=self.changes, model=self.opened.model_name,
                              busy=self.loop.busy, arg=arg)
        if said.diff:
            from duckflow.channels.cli.render import diff_text

            c.print(diff_text(said.text))
        elif said.ok:
            c.print(said.text, markup=False)
        else:
            c.print(f"[yellow]{escape(said.text)}[/]")

    def _approval(self, text: str) -> None:
        c = self.render.console
        if self.editing:
            self.editing = ""
            self.loop.start_answer(False, by="user (chat)", note=text.strip() or None)
            return
        answer, words = understand(text) or (None, "")
        job = self.session.state.pending_job or {}
        if answer == "yes":
            self.loop.start_answer(True, by="user (chat)")
        elif answer == "always":
            self.always = True
            self.loop.start_answer(True, by=ALWAYS_BY)
        elif answer in ("no", "edit") and words:  # "no — call it greet.py instead": a no with these words
            self.loop.start_answer(False, by="user (chat)", note=words)
        elif answer in ("no", "edit"):
            self.editing = answer
            c.print(f"[bold]{INSTEAD if answer == 'no' else CHANGE}[/]")
        elif answer == "details":
            self.render.approval(job.get("request") or {}, job.get("job_id"), call=job.get("call"), details=True)
        else:
            c.print(f"An approval is waiting: {QUESTION}", markup=False)

    def banner(self) -> None:
        s = self.session.state
        c = self.render.console
        extra = f" · session {s.session_id}" if self.render.level != "person" else ""
        c.print(f"[bold]duckflow chat[/] · {escape(s.workspace)} · {escape(self.opened.model_name)}{extra}"
                f"{' (resumed)' if self.opened.resumed else ''}")
        c.print("[dim]Enter sends · Alt+Enter new line · /help lists the commands[/]")
        if s.pending_gate and s.pending_job:
            c.print("[yellow]An approval is still waiting from last time:[/]")
            self.render.approval(s.pending_job.get("request") or {}, s.pending_job.get("job_id"),
                                 call=s.pending_job.get("call"))
            c.print(f"[yellow]{QUESTION}[/]")
        elif self.opened.resumed and self._unfinished():
            c.print(f"[yellow]Last time the task “{escape(s.task)}” stopped part-way.[/] Say \"continue\" "
                    "(続けて) to go on, or tell me what to do instead.")

    def _unfinished(self) -> bool:
        """A resumed task that stopped for the person (cancelled, paused, a break): `continue` goes on."""
        s = self.session.state
        from duckflow.companion.state import Status, Step

        return bool(s.task) and s.step != Step.DONE and s.status == Status.REQUIRES_USER_INPUT \
            and not s.pending_gate and not self.loop.busy


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from duckflow.channels.cli.run_cmd import Renderer
    from duckflow.companion.factory import open_session

    opened = open_session(args.workspace, model_name=model_arg(args.model),
                          session_id=args.session,
                          resume=not args.new and not args.session, codec=args.codec, mode=args.mode)
    tty = sys.stdin.isatty() and sys.stdout.isatty()
    console = Console(highlight=False, emoji=False, force_terminal=tty or None)  # as channels.cli.render
    renderer = Renderer(console, debug=args.debug, verbose=args.verbose, live_line=tty)
    chat = Chat(opened, renderer)
    from duckflow.channels.cli.routed import CliConversation

    chat.talk = CliConversation(opened)
    chat.talk.images = list(args.image or [])
    opened.session.chunks.subscribe(renderer)
    opened.session.chunks.subscribe(chat.watch)
    chat.banner()
    if chat.talk.speakers():
        console.print(f"[dim]{escape(chat.talk.speakers())}[/]")
    for note in chat.talk.notes:
        console.print(f"[dim yellow]note: {escape(note)}[/]")
    try:
        from duckflow.channels.cli.chatkeys import interactive, piped

        asyncio.run(interactive(chat) if tty else piped(chat))
    finally:
        chat.talk.close()
        opened.close()
    return 0
