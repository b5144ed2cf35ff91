"""Renders a companion's chunk stream in a terminal, live: text as it is written, each block as it closes.

One `Renderer` for `duckflow run` and `duckflow chat`. It takes core `Chunk`s (the same
stream the server and chat channels render): `delta` text is printed as it arrives (the Main
reply after a 🦆, the Specialized model's text dimmed), a `reply` prints only what did not
stream, `tool_call` / `tool_response` as they happen, `plan` with each action's state,
`approval` as the five-point panel with the diff. A `progress` start shows a spinner with
what runs and for how long (only on a terminal, and never over streaming text).
"""

from __future__ import annotations

import re
import time
from typing import Any

from rich.markup import escape

MAIN = "companion"
CHAT = "companion.chat"  # the answer to a question typed while a task runs
PREFIX = {MAIN: "🦆 ", CHAT: "🦆 ↳ "}
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # a model's text must not drive the terminal
_RESULT_LINE = re.compile(r"^- \w+\(.*\) → (ok|error|refused|proposed)")
NOTICES_SHOWN = ("auto_approved", "approval_stale", "proposed", "refused_call", "vitals", "plan_progress", "question",
                 "constraint", "paused", "deviation", "plan_no_actions", "overwrite", "copied_example")


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
    def __init__(self, console: Any = None, *, debug: bool = False, quiet: bool = False,
                 spinner: bool = False, live_line: bool = False) -> None:
        """`live_line`: complete lines go to the scrollback and the line being written is kept
        in `partial` (the chat shows it in its bottom bar, which redraws ten times a second:
        a prompt above the output would otherwise overwrite a half-written line)."""
        from rich.console import Console

        # emoji=False: `:name:` in a path, a file or a model's text is printed as written (and
        # rich's 60 KB emoji table is not loaded on every start)
        own = console is None  # our own console (not one a caller passes, e.g. the chat's)
        if console is None:
            import os
            import sys

            # on a pipe or a file, say so once: rich otherwise asks the OS (isatty, and the
            # terminal size on stdin, stdout and stderr) on every print, ~750 failed ioctls in
            # a scripted `duckflow run`; rich's own FORCE_COLOR / TTY_COMPATIBLE still decide
            piped = not sys.stdout.isatty() and not {"FORCE_COLOR", "TTY_COMPATIBLE"} & set(os.environ)
            console = Console(highlight=False, emoji=False, force_terminal=False if piped else None)
            if piped:
                console.size = console.size  # what rich measured (COLUMNS, a terminal on stderr, 80)
        self.console = console
        # our own console on a pipe or file (no terminal, no colours, nothing recorded): plain
        # streamed text is written as it is, which is what rich prints there, without its
        # per-print rendering (a run streams ~90 pieces); see `_write_plain`
        self._plain_ok = (own and not self.console.is_terminal
                          and self.console.color_system is None and not self.console.record)
        self.debug = debug
        self.quiet = quiet
        self.spinner = spinner and self.console.is_terminal
        self._progress: Any = None
        self._line_open = False  # streamed text without its newline yet
        self._streamed: dict[str, str] = {}  # per agent: text streamed since the last block
        self.activity = ""  # what runs now (chat's bottom bar)
        self.activity_since = 0.0
        self.updates = 0  # how many streamed pieces were written (tests, bench)
        self.live_line = live_line
        self._partials: dict[str, str] = {}  # live_line: per agent, the line being written
        self._plans: dict[str, tuple[str, list[str]]] = {}  # plan id → (status, action states) shown

    # -- spinner ------------------------------------------------------------------------
    def stop_spinner(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def _start_spinner(self, what: str) -> None:
        self.activity, self.activity_since = what, time.monotonic()
        if not self.spinner:
            return
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self.stop_spinner()
        self._progress = Progress(SpinnerColumn("dots"), TextColumn("{task.description}"),
                                  TimeElapsedColumn(), console=self.console, transient=True)
        self._progress.add_task(what, total=None)
        self._progress.start()

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

    def _print_line(self, line: str, agent: str) -> None:
        from rich.text import Text

        self.console.print(Text(line, style="" if agent in PREFIX else "dim"))

    @property
    def partial(self) -> str:
        return self.partial_view()

    def partial_view(self) -> str:
        """The lines being written (live_line mode), for the chat's bottom bar."""
        return " │ ".join(p for p in self._partials.values() if p.strip())

    # -- chunks -------------------------------------------------------------------------
    def __call__(self, chunk: Any) -> None:
        if self.quiet:
            return
        fields = dict(chunk.data.__dict__)
        if _dirty(fields):  # escape sequences from a model or a file are shown as nothing, never run
            chunk = chunk.model_copy(update={"data": chunk.data.model_copy(update=clean(fields))})
        kind = chunk.type
        if kind == "progress":
            if chunk.data.phase == "start":
                self._start_spinner(chunk.data.what)
            else:
                self.stop_spinner()
                self.activity = ""
            return
        if kind == "usage":
            if self.debug:
                self._block()
                d = chunk.data
                self.console.print(f"[dim]tokens {d.prompt_tokens}+{d.completion_tokens}"
                                   f"{f' (session {d.session_total})' if d.session_total is not None else ''}[/]")
            return
        if kind == "delta":
            self._delta(chunk)
            return
        getattr(self, f"_on_{kind}", self._ignore)(chunk)

    def _ignore(self, chunk: Any) -> None:
        return None

    def _block(self) -> None:
        self.stop_spinner()
        self._close_line()

    def _delta(self, chunk: Any) -> None:
        from rich.text import Text

        self.stop_spinner()
        agent, text = chunk.agent, chunk.data.text
        before = self._streamed.get(agent, "")
        self.updates += 1
        if self.live_line:
            if not before and agent != CHAT:
                self._close_line()
            partial = self._partials.get(agent) or ("" if before else PREFIX.get(agent, "  "))
            self._streamed[agent] = before + text
            *done, rest = (partial + text).split("\n")
            for line in done:
                self._print_line(line, agent)
            self._partials[agent] = rest
            return
        if not before:
            self._close_line()
            prefix = PREFIX.get(agent, "  ")
            if not self._write_plain(prefix):
                self.console.print(Text(prefix, style="bold"), end="")
        self._streamed[agent] = before + text
        if not self._write_plain(text):
            self.console.print(Text(text, style="" if agent in PREFIX else "dim"), end="")
        self._line_open = not text.endswith("\n")
        file = getattr(self.console, "file", None)
        if file is not None and hasattr(file, "flush"):
            file.flush()

    def _write_plain(self, text: str) -> bool:
        """Write `text` unchanged where rich would print exactly that (no terminal and no colours,
        so styles add nothing; printable characters only, as rich strips control codes; every
        line well within the width, so nothing wraps); False: print it through rich instead."""
        if not self._plain_ok or not text.replace("\n", "").isprintable():
            return False
        width = self.console.width
        if any(2 * len(line) >= width for line in text.split("\n")):  # a character is at most 2 cells
            return False
        self.console.file.write(text)
        return True

    def _on_reply(self, chunk: Any) -> None:
        from rich.panel import Panel
        from rich.text import Text

        text = chunk.data.text
        streamed = self._streamed.pop(chunk.agent, "")
        if chunk.agent == MAIN:
            for agent in [a for a in self._streamed if a != CHAT]:
                self._streamed.pop(agent)
        if streamed and text.startswith(streamed):
            # the rest is what did not stream (policy lines, results): results were shown as they ran
            rest = [ln for ln in text[len(streamed):].strip().splitlines() if not _RESULT_LINE.match(ln)]
            if chunk.agent == CHAT:
                self._close_line(CHAT)
            else:
                self._close_line()
            if any(ln.strip() for ln in rest):
                self.console.print(Text("\n".join(rest).strip()))
            return
        self._block()
        kept = "\n".join(ln for ln in text.splitlines() if not _RESULT_LINE.match(ln)).strip()
        if not kept:
            return  # only tool results, already shown as they ran
        text = kept
        title = "duckflow (while working)" if chunk.agent == CHAT else "duckflow"
        self.console.print(Panel(Text(text), title=Text(title), border_style="green"))

    def _on_decision(self, chunk: Any) -> None:
        from rich.text import Text

        self._block()
        d = chunk.data
        self.console.print(Text(f"💭 {d.rationale}  [{d.step} · {d.pattern}]", style="italic cyan"))

    def _on_state(self, chunk: Any) -> None:
        from rich.text import Text

        d = chunk.data
        if d.allowed:
            self._block()
            self.console.print(Text(f"↪ {d.reason}", style="cyan"))
        elif self.debug:
            self._block()
            self.console.print(Text(f"⛔ {d.reason}", style="yellow"))

    def _on_plan(self, chunk: Any) -> None:
        from rich.panel import Panel
        from rich.text import Text

        self._block()
        d = chunk.data
        streamed = self._streamed.pop("companion.specialized", "")
        marks = {"done": "✓", "failed": "✗", "running": "…", "skipped": "-", "pending": "·"}
        acts = [f"{marks.get(st, '·')} {a}" for a, st in zip(d.actions, d.states or ["pending"] * len(d.actions),
                                                              strict=False)]
        if d.status != "proposed" and acts:  # progress of an approved plan: say what changed
            before = self._plans.get(d.plan_id, ("", []))
            self._plans[d.plan_id] = (d.status, list(d.states))
            n = len(acts)
            changed = [i for i, st in enumerate(d.states) if i >= len(before[1]) or before[1][i] != st]
            for i in changed:
                st = d.states[i]
                if st in ("running", "done", "failed", "skipped"):
                    word = {"running": "step", "done": "done", "failed": "FAILED", "skipped": "skipped"}[st]
                    self.console.print(f"[blue]{marks[st]} plan {word} {i + 1}/{n}: {escape(d.actions[i])}[/]")
            if d.status != before[0] and d.status not in ("executing",):
                done = sum(1 for st in d.states if st == "done")
                self.console.print(f"[blue]plan {escape(d.plan_id)} {d.status} · {done}/{n} done[/]")
            return
        self._plans[d.plan_id] = (d.status, list(d.states))
        body = ("" if streamed else d.text) + ("\n\nactions:\n" + "\n".join(acts) if acts else "")
        self.console.print(Panel(body.strip() or "(no actions)", title=Text(f"plan {d.plan_id}"), border_style="blue"))

    def _on_tool_call(self, chunk: Any) -> None:
        from rich.text import Text

        self._block()
        args = chunk.data.arguments
        target = args.get("path") or args.get("command") or args.get("query") or ""
        self.console.print(Text(f"→ {chunk.data.name} {target}".rstrip(), style="bold"))
        self._start_spinner(f"running {chunk.data.name} {target}".rstrip())

    def _on_tool_response(self, chunk: Any) -> None:
        from rich.text import Text

        self._block()
        d = chunk.data
        body = " ".join(d.content.split())[:160]
        style = "red" if d.is_error else "green"
        self.console.print(Text(f"{'✗' if d.is_error else '✓'} {d.name}: {body}", style=style))

    def _on_approval(self, chunk: Any) -> None:
        from rich.text import Text

        self._block()
        d = chunk.data
        if d.phase == "request":
            self.approval(d.request, d.job_id)
        else:
            word = "approved" if d.granted else "denied"
            self.console.print(Text(f"{'✓' if d.granted else '✗'} job {d.job_id} {word} ({d.by})",
                                    style="green" if d.granted else "yellow"))

    def _on_notice(self, chunk: Any) -> None:
        from rich.text import Text

        d = chunk.data
        if not (self.debug or d.code in NOTICES_SHOWN or "could not" in d.message):
            return
        self._block()
        style = {"proposed": "magenta", "refused_call": "red"}.get(d.code, "dim yellow")
        prefix = {"proposed": "◇ proposed, not run: ", "refused_call": "✗ refused: "}.get(d.code, "ℹ ")
        self.console.print(Text(prefix + d.message, style=style))

    def _on_warning(self, chunk: Any) -> None:
        from rich.text import Text

        self._block()
        self.console.print(Text(f"⚠ {chunk.data.message}", style="yellow"))

    def _on_error(self, chunk: Any) -> None:
        from rich.text import Text

        self._block()
        d = chunk.data
        self.console.print(Text(f"error: {d.message}" + (f" ({d.hint})" if d.hint else ""), style="bold red"))

    def approval(self, request: dict[str, Any], job_id: Any, *, details: bool = False) -> None:
        from rich.panel import Panel
        from rich.text import Text

        self._block()
        request = clean(dict(request))

        def e(value: Any) -> str:  # the request's text comes from a model: no markup, no escapes
            return escape(str(value))

        lines = [
            f"[bold]job[/] {e(job_id)}   risk: {e(request.get('risk', '?'))}",
            f"[bold]intent[/]: {e(request.get('intent', ''))}",
            f"[bold]why[/]: {e(request.get('rationale', ''))}",
            f"[bold]impact[/]: {e(request.get('impact', ''))}",
            f"[bold]alternatives[/]: {e(request.get('alternatives', ''))}",
        ]
        if request.get("hard_required"):
            lines.append(f"[bold red]a person must decide[/]: {e(', '.join(request['hard_required']))}")
        if details:
            lines.append(f"[bold]affected[/]: {e(', '.join(request.get('affected') or []))}")
            lines.append(f"[bold]reversible[/]: {e(request.get('reversible'))}  {e(request.get('rollback', ''))}")
        self.console.print(Panel("\n".join(lines), title=Text("approval needed"), border_style="yellow"))
        diff = request.get("diff_preview") or ""
        if diff:
            shown = diff if details else "\n".join(diff.splitlines()[:40])
            self.console.print(diff_text(shown))


_DIFF_STYLES = (("+++", "bold"), ("---", "bold"), ("@@", "cyan"), ("+", "green"), ("-", "red"))


def diff_text(diff: str) -> Any:
    """A unified diff coloured line by line (no lexer: pygments costs ~40 ms to import)."""
    from rich.text import Text

    out = Text(no_wrap=False)
    for line in diff.splitlines(keepends=True):
        style = next((st for prefix, st in _DIFF_STYLES if line.startswith(prefix)), "")
        out.append(line, style=style)
    return out
