"""The chat's own slash commands, one copy for every channel: /undo, /redo, /diff, /status, /model, /help.

The terminal (`duckflow chat`) and the front door (`Conversation.stream`, so the web page, Slack and
LINE) answer them with `answer_command`, without the router or a model. `command_word(text)` tells a
command from a message; the router's commands (/plan, /code, /local …) are messages for the router
and pass through. An unknown `/word` never reaches the model: it is refused with the list (`/help`). `/undo` restores the workspace before the last
change Duckflow made (the same checkpoints as `duckflow undo`), `/redo` brings it back, `/diff`
shows what the last change did, `/status` says in words where the task stands.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HELP = """Commands
  /undo [#N]       undo the last change Duckflow made, or back to change #N (/redo brings it back)
  /diff            show what the last change did
  /status          where the task stands          /model  which model answers
  /cancel          cancel what runs now (as Esc or Ctrl-C; "continue" goes on)
  /constraint TEXT a rule for the rest of the task
  /remember TEXT   keep it for next time          /sessions  the saved sessions
  /verbose         show or hide the protocol, steps and tool results
  /help            this list                      /quit (or Ctrl-D) ends the chat
Routing, at the start of a message
  /chat /plan /analyze /ops /research /code /code1 /code2 /code3
  /local (no cloud models) · /cloud (allow them again)
While it works: ask a question · type a correction · stop pauses · Esc or Ctrl-C cancels
Approvals: y(es) · n(o), then say what to do instead · e(dit) · a(lways) · d(etails)"""
OWN = ("undo", "redo", "diff", "status", "model", "help", "quit", "exit", "cancel", "constraint", "remember",
       "set", "resume", "sessions", "debug", "verbose")
WEB_HELP = """Commands
  /undo     undo the last change Duckflow made (/undo #N: back to change #N; /redo brings it back)
  /diff     show what the last change did
  /status   where the task stands
  /model    which model answers
  /help     this list
Routing, at the start of a message: /chat /plan /analyze /ops /research /code /code1 /code2 /code3,
/local (no cloud models) · /cloud (allow them again)
Stop (or typing "stop") cancels the running turn; the work so far is kept."""
SHARED = ("undo", "redo", "diff", "status", "model", "help")  # answered the same on every channel
ROUTER = ("chat", "plan", "analyze", "ops", "research", "code", "code1", "code2", "code3", "local", "cloud")
_WORD = re.compile(r"^\s*[/／]([A-Za-z][A-Za-z0-9_-]*)")


def command_word(text: str) -> str | None:
    """`undo` for `/undo …`; None when the text is not a slash command."""
    m = _WORD.match(text)
    return m.group(1).lower() if m else None


def command_arg(text: str) -> str:
    """What follows the /word: `#12` in `/undo #12`."""
    m = _WORD.match(text)
    return text[m.end():].strip() if m else ""


def unknown(word: str) -> str:
    close = difflib.get_close_matches(word, OWN + ROUTER, n=1)
    hint = f" Did you mean /{close[0]}?" if close else ""
    return f"/{word} is not a command, so nothing was sent.{hint} /help lists them."


def status_text(state: Any, busy: bool) -> str:
    """Where the task stands, in words (no step or status names, vitals or ids)."""
    from duckflow.channels.actionwords import headline

    lines = [f"Task: {state.task or '(none yet)'}"]
    if busy:
        lines.append("Working on it now.")
    elif state.pending_gate and state.pending_job:
        job = state.pending_job
        lines.append(f"Waiting for you to approve: {headline(job.get('request') or {}, job.get('call'))} "
                     f"(job {str(job.get('job_id', ''))[:8]})")
    elif state.step.value == "DONE":
        lines.append("Done.")
    elif state.status.value == "REQUIRES_USER_INPUT":
        lines.append("Waiting for your answer.")
    else:
        lines.append("Stopped part-way: say \"continue\" to go on.")
    if state.constraints:
        lines.append("Rules: " + "; ".join(state.constraints))
    if state.plan_brief:
        lines.append("Plan: " + " → ".join(state.plan_brief))
    made = list(dict.fromkeys(state.memory.files_created))
    if made:
        lines.append("Files created: " + ", ".join(made[-8:]))
    return "\n".join(lines)


class Changes:
    """/undo, /redo and /diff over the workspace's checkpoints (DUCKFLOW_HOME, as `duckflow undo`)."""

    def __init__(self, root: str | Path) -> None:
        self.root = str(root)

    def _open(self) -> Any:
        from duckflow.errors import DuckflowError
        from duckflow.workspace.checkpoints import Checkpoints, has_checkpoints

        if not has_checkpoints(self.root):
            raise DuckflowError("nothing to undo: Duckflow has not changed this workspace yet")
        return Checkpoints(self.root)

    def undo(self, to: int | None = None) -> str:
        """The last change not undone, taken back (a stack: /redo, then /undo again, in any order);
        `to`: back to before change #to, the later changes with it (`/undo #12`, the web's row)."""
        from duckflow.workspace.undostack import undo_to
        from duckflow.workspace.undowords import undo_words

        cps = self._open()
        try:
            results = [cps.undo(None)] if to is None else undo_to(cps, to)
        finally:
            cps.close()
        if len(results) == 1:
            return f"{undo_words(results[0])} /redo brings the change back."
        said = "; ".join(undo_words(r).removeprefix("Undone: ").rstrip(".") for r in results)
        return f"Undone {len(results)} changes, newest first: {said}. /redo #{to} brings them back."

    def redo(self, to: int | None = None) -> str:
        from duckflow.errors import DuckflowError
        from duckflow.workspace.checkpoints import CheckpointError
        from duckflow.workspace.undostack import redo_to
        from duckflow.workspace.undowords import undo_words

        cps = self._open()
        try:
            results = [cps.redo()] if to is None else redo_to(cps, to)
        except CheckpointError as exc:
            raise DuckflowError("nothing to redo: /undo first" if to is None else exc.message) from None
        finally:
            cps.close()
        if len(results) == 1:
            return f"{undo_words(results[0])} /undo takes it back again."
        said = "; ".join(undo_words(r).removeprefix("Redone: ").rstrip(".") for r in results)
        return f"Redone {len(results)} changes: {said}. /undo #{to} takes them back again."

    def diff(self) -> str:
        """A unified diff of the last change not undone: the file before it → the file now."""
        cps = self._open()
        try:
            row = cps._db.execute("SELECT id, summary FROM checkpoints WHERE undone = 0 AND tool != 'undo' "
                                  "ORDER BY id DESC LIMIT 1").fetchone()
            if row is None:
                return "No change to show."
            out: list[str] = []
            for e in cps._db.execute("SELECT path, existed, blob FROM entries WHERE checkpoint_id = ? "
                                     "AND kind != 'dir' ORDER BY seq", (row["id"],)).fetchall():
                before = cps._load(e["blob"]).decode("utf-8", "replace") if e["existed"] and e["blob"] else ""
                now_path = Path(self.root) / e["path"]
                now = now_path.read_text("utf-8", "replace") if now_path.is_file() else ""
                out += difflib.unified_diff(before.splitlines(keepends=True), now.splitlines(keepends=True),
                                            "/dev/null" if not e["existed"] else f"a/{e['path']}",
                                            f"b/{e['path']}" if now_path.exists() else "/dev/null")
        finally:
            cps.close()
        return "".join(out) or "The last change left no difference in the files."


@dataclass(frozen=True)
class Answer:
    """A command's answer: its text, whether it did what was asked, and whether the text is a diff."""

    text: str
    ok: bool = True
    diff: bool = False


def change_number(arg: str) -> int | None:
    """`#12` or `12` after /undo or /redo: the change to go back to (None: the last one)."""
    m = re.fullmatch(r"#?(\d{1,9})", arg.strip())
    return int(m.group(1)) if m else None


def answer_command(word: str, state: Any, *, changes: Changes, model: str, busy: bool = False,
                   channel: str = "cli", arg: str = "") -> Answer:
    """The answer to `/word` (no model call): one of `SHARED`, or a refusal naming what works."""
    from duckflow.errors import DuckflowError

    terminal = channel == "cli"
    if word not in SHARED:
        if word == "cancel" and not terminal and not busy:  # (while busy the channel stops the turn)
            return Answer("Nothing is running.", ok=False)
        if word in OWN and not terminal:
            return Answer(f"/{word} works in the terminal chat (`duckflow chat`); /help lists what works here.", ok=False)
        return Answer(unknown(word), ok=False)
    if word == "help":
        return Answer(HELP if terminal else WEB_HELP)
    if word == "status":
        return Answer(status_text(state, busy))
    if word == "model":
        again = "`duckflow chat --model NAME`" if terminal else "restart with `duckflow serve --model NAME`"
        return Answer(f"Model: {model}. Another one: {again} (`duckflow models list` shows the offline ones).")
    if busy:
        return Answer(f"/{word} waits until the task stops ({'Esc or Ctrl-C cancels it' if terminal else 'Stop ends it'}).",
                      ok=False)
    try:
        if word == "diff":
            text = changes.diff()
            return Answer(text, diff=text.startswith("--- "))
        to = change_number(arg)
        if arg.strip() and to is None:
            return Answer(f"/{word} takes a change's number, e.g. /{word} #12 (or nothing: the last change).",
                          ok=False)
        return Answer(changes.undo(to) if word == "undo" else changes.redo(to))
    except DuckflowError as exc:
        return Answer(exc.message, ok=False)
