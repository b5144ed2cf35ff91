"""The chat's keys and input: Ctrl-C clears the line, cancels the running turn (Esc too) or, pressed
twice at an empty prompt, quits; Alt+Enter a new line; up-arrow history per workspace; piped input.

`interactive(chat)` reads a terminal with prompt_toolkit (the bottom bar is `Chat.toolbar`),
`piped(chat)` one line at a time from stdin; both hand each line to `Chat.handle` (chat_cmd.py).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

Chat = Any  # channels/cli/chat_cmd.Chat (not imported: chat_cmd imports this file)


def history_file(root: str) -> Path:
    """The chat's input history of one workspace (up-arrow across sessions), kept in DUCKFLOW_HOME."""
    from duckflow.paths import duckflow_home
    from duckflow.workspace.checkpoints import private_dir, workspace_key

    return private_dir(duckflow_home() / "history") / workspace_key(root)


QUIT_HINT = "(Ctrl-C again to quit, or /quit)"


async def interactive(chat: Chat) -> None:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.application import run_in_terminal
    from prompt_toolkit.filters import Condition
    from prompt_toolkit.history import FileHistory
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.patch_stdout import patch_stdout

    kb = KeyBindings()
    armed = [False]  # a Ctrl-C at an empty prompt at rest: the next one quits

    @kb.add("escape", "enter")
    def _newline(event: Any) -> None:
        event.current_buffer.insert_text("\n")

    def cancel_turn() -> None:  # the running turn ends as cancelled; its state and checkpoints stay
        asyncio.get_running_loop().create_task(chat.loop.cancel())

    @kb.add("c-c")
    def _ctrl_c(event: Any) -> None:
        """As other agents taught: clear the typed line; else cancel the running turn; only a
        second Ctrl-C at an empty prompt quits."""
        buffer = event.current_buffer
        if buffer.text:
            buffer.reset()
            armed[0] = False
        elif chat.loop.busy:
            cancel_turn()
        elif armed[0]:
            event.app.exit(exception=EOFError())
        else:
            armed[0] = True
            run_in_terminal(lambda: chat.render.console.print(f"[dim]{QUIT_HINT}[/]"))

    @kb.add("escape", filter=Condition(lambda: chat.loop.busy))
    def _escape(event: Any) -> None:  # Esc cancels the running turn
        cancel_turn()

    ps: PromptSession[str] = PromptSession(
        history=FileHistory(str(history_file(chat.session.state.workspace or "."))), key_bindings=kb,
        bottom_toolbar=chat.toolbar, refresh_interval=0.1,
    )
    ps.default_buffer.on_text_changed += lambda _buffer: armed.__setitem__(0, False)  # typing disarms it
    with patch_stdout(raw=True):
        while True:
            try:
                text = await ps.prompt_async("you › ")
                armed[0] = False
            except KeyboardInterrupt:  # (a Ctrl-C the bindings above did not take)
                if chat.loop.busy:
                    await chat.loop.cancel()
                    continue
                break
            except EOFError:
                if chat.loop.busy:
                    await chat.loop.cancel()
                break
            if not await chat.handle(text):
                break


async def piped(chat: Chat) -> None:
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            break
        was_busy = chat.loop.busy
        if not await chat.handle(line):
            break
        if chat.loop.busy and (not was_busy or not line.strip().startswith("/")):  # the line started a task
            await chat.loop.wait(timeout=600)
    if chat.loop.busy:
        await chat.loop.wait(timeout=600)
