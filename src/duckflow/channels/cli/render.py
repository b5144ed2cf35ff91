"""Prints a companion's chunk stream in a terminal, live: what `channels/present.py` says a person reads.

One `Renderer` for `duckflow run` and `duckflow chat`. Each chunk goes through the shared
`Presenter`; the lines the view's level allows (`person` by default, `verbose` with
`--verbose`, `debug` with `--debug`) are printed: the model's prose as it streams (after a 🦆),
one line per action, the approval card (headline, the five points, the diff once, a short job
id), a sentence for a stop or an error. What is being waited on (loading, thinking, writing with
its token count, a command running) is one updating status line with its time (a spinner on a
terminal; chat shows it in its bottom bar), never printed into the scrollback; on a terminal the
last few lines of the file being written show under it (chat: the last one, in its bottom bar),
and on a pipe every line prints in order.
"""

from __future__ import annotations

import re
import time
from typing import Any

from duckflow.channels.actionwords import card
from duckflow.channels.present import CHAT, MAIN, Line, Presenter, visible

PREFIX = {MAIN: "🦆 ", CHAT: "🦆 ↳ "}
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # a model's text must not drive the terminal
ANSWERS = "y(es) / n(o) / e(dit) / a(lways for this session)"
WINDOW = 4  # lines of a file being written shown under the status line (quiet in 80x24)


def _dirty(value: Any) -> bool:
    if isinstance(value, str):
        return _CONTROL.search(value) is not None
    if isinstance(value, dict):
        return any(_dirty(v) for v in value.values())
    if isinstance(value, list):
        return any(_dirty(v) for v in value)
    return False


def clean(value: Any) -> Any:
    """`value` with terminal control characters (ESC, CR, BEL, C1 ...) removed from every string."""
    if isinstance(value, str):
        return _CONTROL.sub("", value)
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean(v) for v in value]
    return value


class Renderer:
    def __init__(self, console: Any = None, *, debug: bool = False, verbose: bool = False, quiet: bool = False,
                 spinner: bool = False, live_line: bool = False) -> None:
        """`live_line`: complete lines go to the scrollback and the line being written is kept
        in `partial` (the chat shows it in its bottom bar, which redraws ten times a second:
        a prompt above the output would otherwise overwrite a half-written line)."""
        from rich.console import Console

        own = console is None  # our own console (not one a caller passes, e.g. the chat's)
        if console is None:
            import os
            import sys

            # on a pipe or a file, say so once: rich otherwise asks the OS on every print
            piped = not sys.stdout.isatty() and not {"FORCE_COLOR", "TTY_COMPATIBLE"} & set(os.environ)
            console = Console(highlight=False, emoji=False, force_terminal=False if piped else None)
            if piped:
                console.size = console.size
        self.console = console
        # our own console on a pipe or file: plain streamed text is written as it is (`_write_plain`)
        self._plain_ok = (own and not self.console.is_terminal
                          and self.console.color_system is None and not self.console.record)
        self.level = "debug" if debug else "verbose" if verbose else "person"
        self.quiet = quiet
        self.spinner = spinner and self.console.is_terminal
        self.present = Presenter()
        self._progress: Any = None
        self._task: Any = None
        self._line_open = False  # streamed text without its newline yet
        self._open_agent = ""  # the agent whose streamed text is last on the screen
        self._started: set[str] = set()  # agents whose streamed block has begun (its 🦆 printed)
        self.activity = ""  # what is being waited on now (chat's bottom bar)
        self.window: list[str] = []  # on a terminal: the last lines of the file being written
        self.activity_since = 0.0
        self.updates = 0  # how many streamed pieces were written (tests, bench)
        self.live_line = live_line
        self._partials: dict[str, str] = {}  # live_line: per agent, the line being written
        self.last_card: dict[str, Any] | None = None
        # under auto-approve (`run --auto-approve-workspace`) a card is held until its answer:
        # answered automatically, only its diff is shown (nobody is asked); else the whole card
        self.hold_cards = False
        self._held: Line | None = None
        self._auto_diff = ""
        self._said_error = ""  # the last error shown: a reply repeating it is not printed again
        self.last_stop = ""  # the last stop sentence shown (run does not say it again)
        self.last_prose = ""  # the last reply shown, its whitespace folded (nor a reply's last line)

    @property
    def debug(self) -> bool:
        return self.level == "debug"

    @debug.setter
    def debug(self, on: bool) -> None:
        self.level = "debug" if on else "person"

    # -- status line ----------------------------------------------------------------------
    def stop_spinner(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def _status(self, text: str) -> None:
        if not text.startswith("Writing"):
            self.window = []  # what was being written is done with (its action, card or diff follows)
        if not text:
            self.activity = ""
            self.stop_spinner()
            return
        if text.split(" ·")[0] != self.activity.split(" ·")[0]:
            self.activity_since = time.monotonic()
        self.activity = text
        if not self.spinner or self._line_open:
            return
        width = max(20, self.console.width - 8)
        shown = "\n".join([text, *(ln if len(ln) <= width else ln[:width - 1] + "…" for ln in self.window)])
        if self._progress is None:
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            self._progress = Progress(SpinnerColumn("dots"), TextColumn("{task.description}", markup=False),
                                      TimeElapsedColumn(), console=self.console, transient=True)
            self._task = self._progress.add_task(shown, total=None)
            self._progress.start()
        else:
            self._progress.update(self._task, description=shown)

    def _writing(self, line: Line) -> bool:
        """On a terminal a file's lines as they are written are the last few under the status line,
        not the scrollback (the action line and its diff or card follow); True when kept there."""
        if not (self.spinner or self.live_line):
            return False  # a pipe or a file: every line, in order
        if not line.text.lstrip().startswith("Writing "):  # (the status line names the file)
            self.window = [*self.window, line.text.rstrip()][-WINDOW:]
        return True

    # -- streamed text ------------------------------------------------------------------
    def _close_line(self, *agents: str) -> None:
        """End the lines being written: of `agents`, or of the task's agents (not a side answer)."""
        if self.live_line:
            for agent in agents or [a for a in self._partials if a != CHAT]:
                line = self._partials.pop(agent, "")
                if line.strip():
                    self._print_line(line, agent)
            self._line_open = False
            return
        if self._line_open:
            self.console.print()
            self._line_open = False
        self._open_agent = ""

    def _print_line(self, line: str, agent: str) -> None:
        from rich.text import Text

        self.console.print(Text(line, style="" if agent in PREFIX else "dim"))

    @property
    def partial(self) -> str:
        return self.partial_view()

    def partial_view(self) -> str:
        """The lines being written (live_line mode), for the chat's bottom bar (which shows the
        last line of a file being written, `window`, after its status line)."""
        return " │ ".join(p for p in self._partials.values() if p.strip())

    def _stream(self, agent: str, text: str, dim: bool) -> None:
        from rich.text import Text

        self.stop_spinner()
        self.updates += 1
        if self.live_line:
            if agent not in self._started:
                if agent != CHAT:
                    self._close_line()
                self._started.add(agent)
                partial = PREFIX.get(agent, "  ")
            else:
                partial = self._partials.get(agent, "")
            *done, rest = (partial + text).split("\n")
            for line in done:
                self._print_line(line, agent)
            self._partials[agent] = rest
            return
        if self._open_agent != agent:
            self._close_line()
            self._open_agent = agent
        if agent not in self._started:
            self._started.add(agent)
            prefix = PREFIX.get(agent, "  ")
            if not self._write_plain(prefix):
                self.console.print(Text(prefix, style="bold"), end="")
        if not self._write_plain(text):
            self.console.print(Text(text, style="dim" if dim else ""), end="")
        self._line_open = not text.endswith("\n")
        file = getattr(self.console, "file", None)
        if file is not None and hasattr(file, "flush"):
            file.flush()

    def _write_plain(self, text: str) -> bool:
        """Write `text` unchanged where rich would print exactly that (no terminal and no colours,
        printable characters only, every line well within the width); False: print it through rich."""
        if not self._plain_ok or not text.replace("\n", "").isprintable():
            return False
        width = self.console.width
        if any(2 * len(line) >= width for line in text.split("\n")):  # a character is at most 2 cells
            return False
        self.console.file.write(text)
        return True

    def cut_short(self) -> None:
        """A turn cancelled part-way (Ctrl-C, Esc): what it was writing ends on its own line,
        marked as cancelled, so what is said next starts on a fresh line."""
        self.stop_spinner()
        mark = " … (cancelled)"
        if self.live_line:
            for agent in [a for a in self._partials if a != CHAT]:
                line = self._partials.pop(agent, "")
                if line.strip():
                    self._print_line(line.rstrip() + mark, agent)
        elif self._line_open:
            self.console.print(mark, style="dim")
        self._line_open = False
        self._started = {a for a in self._started if a == CHAT}

    def _end_stream(self, agent: str) -> None:
        self._started.discard(agent)
        if agent == MAIN:
            self._started = {a for a in self._started if a == CHAT}
        if self.live_line:
            self._close_line(agent)
        elif self._open_agent == agent or agent == MAIN:
            self._close_line()

    # -- chunks -------------------------------------------------------------------------
    def __call__(self, chunk: Any) -> None:
        if self.quiet:
            return
        fields = dict(chunk.data.__dict__)
        if _dirty(fields):  # escape sequences from a model or a file are shown as nothing, never run
            chunk = chunk.model_copy(update={"data": chunk.data.model_copy(update=clean(fields))})
        if chunk.type == "notice" and chunk.data.code in ("paused", "cancelled"):
            self.cut_short()  # (the partial reply of the cancelled turn is marked as such)
        if chunk.type == "tool_call_delta" and self._line_open and not self.live_line:
            self._close_line()  # the reply's words so far end their line: what the call writes shows below
        for line in self.present.feed(chunk):
            if self._held is not None and (line.kind != "status" and line.text and visible(line, self.level)
                                           or line.kind == "answer"):
                held, self._held = self._held, None
                if line.kind == "answer" and line.data.get("auto") and line.data.get("job") == held.data.get("job"):
                    self.auto_approved(held.data)
                    continue
                self.show(held)
            if self.hold_cards and line.kind == "approval":
                self._held = line
                continue
            if line.kind == "status":
                self._status(line.text)
            elif visible(line, self.level):
                self.show(line)

    def show(self, line: Line) -> None:
        from rich.text import Text

        agent = str(line.data.get("agent", ""))
        if line.kind == "prose" and not line.data.get("block"):
            if line.data.get("end"):
                self._end_stream(agent)
            else:
                self._stream(agent, line.text, dim=False)
            return
        if line.kind == "detail" and line.data.get("stream"):
            self._stream(agent, line.text, dim=True)
            return
        if line.kind == "detail" and line.data.get("writing") and self._writing(line):
            return
        self.stop_spinner()
        self._close_line()
        if line.kind == "prose":
            if self._said_error and "call failed: " in line.text and self._said_error in " ".join(line.text.split()):
                return  # a failed model call's reply only repeats the error just shown with its next step
            title = "🦆 ↳ " if agent == CHAT else "🦆 "
            self.last_prose = " ".join(line.text.split())
            self.console.print(Text(title + line.text))
        elif line.kind == "action":
            ok = line.data.get("ok", True)
            self.console.print(Text(f"● {line.text}", style="green" if ok else "red"))
            if self._auto_diff:
                self.console.print(diff_text(self._auto_diff))
                self._auto_diff = ""
        elif line.kind == "approval":
            self.card(line.data)
        elif line.kind == "answer":
            ok = line.data.get("granted")
            self.console.print(Text(f"{'✓' if ok else '✗'} {line.text}", style="green" if ok else "yellow"))
        elif line.kind == "stop":
            self.last_stop = line.text
            self.console.print(Text(line.text, style="yellow"))
        elif line.kind == "error":
            self._said_error = " ".join(line.text.split(" — next: ")[0].split())
            self.console.print(Text(f"✗ {line.text}", style="bold red"))
        elif line.kind == "note":
            self.console.print(Text(line.text, style="yellow"))
        else:
            self.console.print(Text(line.text, style="dim"))
        if self.activity and self.spinner:
            self._status(self.activity)

    def card(self, parts: dict[str, Any], *, details: bool = False) -> None:
        """The approval card: the headline, the five points, the diff once, the short job id."""
        from rich.panel import Panel
        from rich.table import Table
        from rich.text import Text

        self.stop_spinner()
        self._close_line()
        parts = clean(parts)
        self.last_card = parts
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style="bold", no_wrap=True)
        grid.add_column()
        for key, value in parts["points"]:
            grid.add_row(f"{key}:", Text(str(value)))
        if details:
            grid.add_row("Job:", Text(parts.get("job_id", "")))
            for key, value in parts.get("details", []):
                grid.add_row(f"{key}:", Text(str(value)))
        self.console.print(Panel(grid, title=Text(parts["headline"], style="bold"), title_align="left",
                                 subtitle=Text(f"job {parts['job']}"), subtitle_align="right",
                                 border_style="yellow"))
        diff = (parts.get("diff") or "").rstrip("\n")
        if diff:
            lines = diff.splitlines()
            shown = diff if details or len(lines) <= 40 else "\n".join(lines[:40]) + f"\n… {len(lines) - 40} more lines"
            self.console.print(diff_text(shown))

    def flush(self) -> None:
        """Show a card still held (the run stopped at it: a person must decide)."""
        if self._held is not None:
            held, self._held = self._held, None
            self.show(held)

    def auto_approved(self, parts: dict[str, Any]) -> None:
        """A change approved automatically: its diff, no card (the action line follows)."""
        self.stop_spinner()
        self._close_line()
        diff = (clean(parts).get("diff") or "").rstrip("\n")
        new_file = diff.startswith("--- /dev/null")
        lines = [ln for ln in diff.splitlines()
                 if not ln.startswith(("--- ", "+++ ")) and not (new_file and ln.startswith("@@"))]
        if lines and not diff.startswith("$ "):
            shown = lines[:20] + ([f"… {len(lines) - 20} more lines"] if len(lines) > 20 else [])
            self._auto_diff = "\n".join(shown)  # shown under the action's line, which follows

    def approval(self, request: dict[str, Any], job_id: Any, *, details: bool = False,
                 call: dict[str, Any] | None = None) -> None:
        """The card for a request kept in a session (a resumed chat, `details`)."""
        parts = card(dict(request), call, job_id)
        if details:
            parts["details"] = [("Files", ", ".join(request.get("affected") or []) or "-"),
                                ("Undo", str(request.get("rollback") or "not undoable").replace(
                                    "`duckflow undo`", "/undo"))]
        self.card(parts, details=details)


_DIFF_STYLES = (("+++", "bold"), ("---", "bold"), ("@@", "cyan"), ("+", "green"), ("-", "red"))


def diff_text(diff: str) -> Any:
    """A unified diff coloured line by line (no lexer: pygments costs ~40 ms to import)."""
    from rich.text import Text

    out = Text(no_wrap=False)
    for line in diff.splitlines(keepends=True):
        style = next((st for prefix, st in _DIFF_STYLES if line.startswith(prefix)), "")
        out.append(line, style=style)
    return out
