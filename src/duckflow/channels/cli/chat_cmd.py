"""`duckflow chat`: the companion REPL — history, multi-line input, approvals inline, typing while a task runs.

Enter sends; Alt+Enter (or Esc then Enter) adds a new line. While the companion works, a
spinner with what runs and for how long sits in the bottom bar and the prompt stays open (the
dual loop of seed 001 §4.4): a question is answered at once, in parallel and read-only; a
correction reaches the task at its next step; "stop" / "wait" / 止めて / 待って (or Ctrl-C)
pauses it cleanly, "continue" / 続けて goes on; `/status`, `/constraint TEXT`, `/cancel` act
at once. An approval is answered with yes / no / details / edit (edit: say what to do
instead; the request is denied and your text becomes the next message). Without a terminal
(stdin piped) it reads one line at a time.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from rich.markup import escape

from duckflow.channels.cli.common import add_model_options, add_workspace
from duckflow.channels.cli.render import clean

HELP = """commands: /status  /constraint TEXT  /remember TEXT  /set KEY VALUE  /cancel  /resume  /sessions
          /debug  /help  /quit
while it works: ask a question (answered at once) · type a correction (used at the next step)
               stop / wait / 止めて / 待って or Ctrl-C pauses · continue / 続けて goes on
routing:  /chat /plan /analyze /ops /research /code /code1 /code2 /code3 at the start of a line;
          /local (no cloud models) · /cloud (allow them again)
approvals: yes · no · details · edit (then type what to do instead)"""
YES = {"y", "yes", "ok", "approve", "はい"}
NO = {"n", "no", "deny", "いいえ"}
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
    parser.add_argument("--debug", action="store_true", help="show refused transitions, notices, model calls")


class Chat:
    def __init__(self, opened: Any, renderer: Any) -> None:
        from duckflow.companion.dualloop import DualLoop

        self.opened = opened
        self.session = opened.session
        self.routed: Any = None  # the seed 003 router in front of the companion (channels/cli/routed.py)
        self.render = renderer
        self.loop = DualLoop(self.session, on_done=self._done)
        self.activity = ""
        self.editing = False

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
            c.print(f"[bold red]the task failed:[/] {escape(clean(str(exc)))}")
        elif outcome is None:
            if not self.loop.paused:
                c.print(f"[yellow]stopped during {self.session.state.step.value}; the state is kept. "
                        "Say \"continue\" (or /resume) to go on, or tell me what to do instead.[/]")
        elif outcome.ending == "approval":
            c.print("[yellow]answer: yes / no / details / edit[/]")
        elif outcome.ending not in ("done", "input"):
            c.print(f"[yellow]{outcome.ending}: {escape(clean(outcome.message))}[/]")

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
            wait = " · approval waiting" if s.pending_gate else ""
            return f" {s.step.value} · {s.status.value}{wait} · /help"
        frame = SPIN[int(time.monotonic() * 10) % len(SPIN)]
        activity = (self.activity or "working").rstrip("…")
        since = self.render.activity_since
        took = f" {time.monotonic() - since:.0f}s" if self.activity and since else ""
        return f" {frame} {activity}…{took} (ask · correct · stop · /status · Ctrl-C stops this step)"

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
        if text == "/help":
            c.print(HELP)
        elif text == "/status":
            c.print(self.loop.status_text())
        elif text.startswith("/constraint"):
            body = text[len("/constraint"):].strip()
            c.print(self.loop.add_constraint(body) if body else "usage: /constraint TEXT")
        elif text.startswith("/remember "):
            pattern = text[len("/remember "):].strip()
            self.session.owner.change("learned", lambda st: st.memory.learn(pattern))
            c.print(f"remembered: {pattern}")
        elif text.startswith("/set "):
            key, _, value = text[len("/set "):].strip().partition(" ")
            if not key or not value:
                c.print("usage: /set KEY VALUE (e.g. /set style black)")
            else:
                self.session.owner.change(f"setting {key}",
                                          lambda st: st.memory.user_settings.__setitem__(key, value.strip()))
                c.print(f"setting {key} = {value.strip()}")
        elif text == "/cancel":
            c.print("cancelling…" if await self.loop.cancel() else "nothing is running")
        elif text == "/resume" and not self.loop.busy:
            self.loop.start_continue()
        elif text == "/debug":
            self.render.debug = not self.render.debug
            c.print(f"debug output {'on' if self.render.debug else 'off'}")
        elif text == "/sessions":
            from duckflow.channels.cli import sessions_cmd

            sessions_cmd.run(argparse.Namespace(limit=10, json=False, delete=None))
        elif self.loop.busy:
            await self.loop.interject(text)
        elif self.session.state.pending_gate:
            self._approval(text)
        elif (self.loop.paused or self._unfinished()) and is_resume(text):
            self.loop.start_continue()
        elif self.routed is not None and self.routed.pending_job:
            if not await self.routed.answer(text):
                c.print("a Coder job waits for your approval: yes / no")
        else:
            body = await self.routed.send(text) if self.routed is not None else text
            if body is not None:
                self.loop.start_message(body)
        return True

    def _approval(self, text: str) -> None:
        low = text.lower()
        job = self.session.state.pending_job or {}
        if self.editing:
            self.editing = False
            self.loop._start(self._deny_then(text))
        elif low in YES:
            self.loop.start_answer(True, by="user (chat)")
        elif low in NO:
            self.loop.start_answer(False, by="user (chat)")
        elif low in ("d", "details", "show", "show details"):
            self.render.approval(job.get("request") or {}, job.get("job_id"), details=True)
        elif low in ("e", "edit"):
            self.editing = True
            self.render.console.print("say what to do instead (the request will be denied):")
        else:
            self.render.console.print("an approval is waiting: yes / no / details / edit")

    async def _deny_then(self, instruction: str) -> Any:
        await self.session.answer_approval(False, by="user (chat, edited)", note=instruction)
        return await self.session.handle_message(instruction)

    def banner(self) -> None:
        s = self.session.state
        c = self.render.console
        c.print(f"[bold]duckflow chat[/] · {s.workspace} · model {self.opened.model_name} · "
                f"session {s.session_id}{' (resumed)' if self.opened.resumed else ''}")
        c.print("[dim]Enter sends · Alt+Enter new line · /help[/]")
        if s.pending_gate and s.pending_job:
            c.print("[yellow]an approval is still waiting from last time:[/]")
            self.render.approval(s.pending_job.get("request") or {}, s.pending_job.get("job_id"))
            c.print("[yellow]answer: yes / no / details / edit[/]")
        elif self.opened.resumed and self._unfinished():
            c.print(f"[yellow]last time the task “{escape(s.task)}” stopped during {s.step.value}"
                    f"{': ' + escape(clean(s.last_delta)) if s.last_delta else ''}.[/] Say \"continue\" (続けて) to go on "
                    "from there, or tell me what to do instead.")

    def _unfinished(self) -> bool:
        """A resumed task that stopped for the person (cancelled, paused, a break): `continue` goes on."""
        s = self.session.state
        from duckflow.companion.state import Status, Step

        return bool(s.task) and s.step != Step.DONE and s.status == Status.REQUIRES_USER_INPUT \
            and not s.pending_gate and not self.loop.busy


async def _interactive(chat: Chat) -> None:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.patch_stdout import patch_stdout

    from duckflow.paths import duckflow_home

    kb = KeyBindings()

    @kb.add("escape", "enter")
    def _newline(event: Any) -> None:
        event.current_buffer.insert_text("\n")

    duckflow_home().mkdir(parents=True, exist_ok=True)
    ps: PromptSession[str] = PromptSession(
        history=FileHistory(str(duckflow_home() / "chat_history")), key_bindings=kb,
        bottom_toolbar=chat.toolbar, refresh_interval=0.1,
    )
    with patch_stdout(raw=True):
        while True:
            try:
                text = await ps.prompt_async("you › ")
            except KeyboardInterrupt:  # Ctrl-C: stop the running step (state kept); at rest: quit
                if chat.loop.busy:
                    await chat.loop.pause()
                    continue
                break
            except EOFError:
                if chat.loop.busy:
                    await chat.loop.cancel()
                break
            if not await chat.handle(text):
                break


async def _piped(chat: Chat) -> None:
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            break
        if not await chat.handle(line):
            break
        if chat.loop.busy and not line.strip().startswith("/"):
            await chat.loop.wait(timeout=600)
    if chat.loop.busy:
        await chat.loop.wait(timeout=600)


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from duckflow.channels.cli.routed import chat_model_name
    from duckflow.channels.cli.run_cmd import Renderer
    from duckflow.companion.factory import open_session

    opened = open_session(args.workspace, model_name=args.model or chat_model_name(args.workspace),
                          session_id=args.session,
                          resume=not args.new and not args.session, codec=args.codec, mode=args.mode)
    tty = sys.stdin.isatty() and sys.stdout.isatty()
    console = Console(highlight=False, emoji=False, force_terminal=tty or None)  # as channels.cli.render
    renderer = Renderer(console, debug=args.debug, live_line=tty)
    chat = Chat(opened, renderer)
    from duckflow.channels.cli.routed import RoutedInput

    chat.routed = RoutedInput(opened, console)
    chat.routed.images = list(args.image or [])
    opened.session.chunks.subscribe(renderer)
    chat.banner()
    try:
        asyncio.run(_interactive(chat) if tty else _piped(chat))
    finally:
        chat.routed.close()
        opened.close()
    return 0
