"""A cancelled turn's account: read from the checkpoints (what is still changed, how many /undo), a command
said too; and the chat's cancel (as Esc / Ctrl-C do) ends the turn as cancelled — the partial reply kept in
the exchanges, the step's one-shot notes dropped, not paused — and the next message runs as any other."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

from rich.console import Console

from duckflow.channels.cancelled import cancelled_line, watch_chunk
from duckflow.channels.cli.chat_cmd import Chat
from duckflow.channels.cli.run_cmd import Renderer
from duckflow.llm.scripted import ScriptedModel, ScriptedRequest, tool_call
from duckflow.llm.types import TextDelta
from duckflow.workspace.checkpoints import Checkpoints
from duckflow.workspace.turnchanges import TurnChanges
from tests.helpers.companion import decision


def test_the_account_counts_what_the_checkpoints_still_hold_since_the_turn_began(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "old.py").write_text("x\n")
    cps = Checkpoints(root)
    cps.record("write_file", ["old.py"], "before the turn")
    turn = TurnChanges(str(root))
    assert cancelled_line(turn.files()) == "Cancelled — nothing was changed."  # the earlier change is not the turn's
    cps.record("write_file", ["a.py"], "write a.py")
    (root / "a.py").write_text("a\n")
    cps.record("edit_file", ["old.py"], "edit old.py")
    said = cancelled_line(turn.files())
    assert said == "Cancelled — 2 files changed so far (a.py, old.py); /undo 2 times to take them back."
    cps.undo(None)  # the edit of old.py taken back: no longer a change of the turn
    assert cancelled_line(turn.files(), undo="`duckflow undo`") == \
        "Cancelled — 1 file changed so far (a.py); `duckflow undo` to take it back."
    cps.close()
    watch_chunk(turn, {"type": "tool_response", "data": {"name": "execute_shell", "content": "denied by you"}})
    assert turn.commands == []  # a command that never ran is not counted
    watch_chunk(turn, {"type": "tool_response", "data": {"name": "execute_shell", "content": '{"exit_code": 0}'}})
    assert "It ran a command before that; what a command changed is not counted here." in cancelled_line(turn.files())


class Hangs(ScriptedModel):
    """A scripted model whose call number `at` writes `partial` word by word, then never finishes."""

    def __init__(self, steps: list[Any], *, at: int, partial: str) -> None:
        super().__init__(steps)
        self.at, self.partial, self.writing = at, partial, asyncio.Event()

    async def stream(self, messages: Any, *, tools: Any = (), settings: Any = None) -> Any:
        if len(self.requests) == self.at:
            self.requests.append(ScriptedRequest(list(messages), list(tools), settings))
            self.steps.insert(self.at, decision("DONE", next_step="done", say="never used"))
            for word in self.partial.split(" "):
                yield TextDelta(text=word + " ")
            self.writing.set()
            await asyncio.sleep(30)
        async for event in super().stream(messages, tools=tools, settings=settings):
            yield event


def _chat(opened: Any) -> tuple[Chat, io.StringIO]:
    buf = io.StringIO()
    renderer = Renderer(Console(file=buf, width=200, highlight=False))
    chat = Chat(opened, renderer)
    opened.session.chunks.subscribe(renderer)
    opened.session.chunks.subscribe(chat.watch)
    return chat, buf


async def test_cancel_after_a_write_says_so_keeps_the_partial_reply_and_the_next_turn_starts_clean(env: Any) -> None:
    model = Hangs([
        decision("EXECUTION", "base_main_specialized", rationale="write a.py", say="Writing a.py now."),
        tool_call("write_file", path="a.py", content="print('a')\n"),
        decision("PLANNING", next_step="pending_user", say="Hello again."),
    ], at=2, partial='{"reply": "Written; now reviewing a.py carefully')
    opened = env.open(model)
    chat, out = _chat(opened)
    await chat.handle("write a.py")
    await asyncio.wait_for(chat.loop.wait(timeout=10), 10)  # the card
    await chat.handle("y")
    await asyncio.wait_for(model.writing.wait(), 10)
    await asyncio.sleep(0.05)
    assert (Path(chat.session.state.workspace) / "a.py").exists()
    chat.session.turn.check_next = "python a.py"  # a one-shot note the step left for the next one
    assert await chat.loop.cancel()
    text = out.getvalue()
    assert "Cancelled — 1 file changed so far (a.py); /undo to take it back." in text
    assert "Paused" not in text and not chat.loop.paused and not chat.loop.busy
    last = chat.session.state.exchanges[-1]
    assert "Written; now reviewing a.py carefully" in last.reply and last.reply.endswith("(cancelled)")
    assert chat.session.turn.check_next == ""  # dropped: the next message starts clean
    assert "cancelled by the person during REVIEW" in chat.session.state.decision_log
    await chat.handle("hello")  # the next message: a model call as any other, not a resumed check
    await asyncio.wait_for(chat.loop.wait(timeout=10), 10)
    assert "Hello again." in out.getvalue()
    prompt = "\n".join(m.content for m in model.requests[-1].messages)
    assert "Written; now reviewing a.py carefully … (cancelled)" in prompt  # the next prompt shows the cancelled reply
