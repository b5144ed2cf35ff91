"""What a person reads, made from the one Chunk stream: prose, one line per action, the approval card, plain stops.

Every channel (the terminal, Slack, LINE) shows the same words. `Presenter.feed(chunk)` turns
one chunk into `Line`s, each with the level it needs: `person` (the default view: the model's
prose, `Edit calc.py (+2 −0)`, `Run python3 hello.py → exit 0, 15 lines`, the approval card, a
sentence for a stop or an error; an action's and the card's words are channels/actionwords.py's),
`verbose` (protocol text, state moves, decisions, plans, tool JSON) or `debug` (everything else:
refused moves, token counts, every notice). While a model writes, the file's lines and the
command show as they come, from its protocol text (Sym-Ops, DML) or its native call's arguments
(`tool_call_delta`), read by channels/writing.py. A `status` line says what is being waited on:
"Reading the prompt" until the model's first piece arrives, then "Writing greet.py · line 5"
(or "Writing · 312 characters" before a file begins), a command while it runs; a channel with
one updating line shows it there. No rich, no I/O.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from duckflow.channels.actionwords import (
    action_text,
    card,
    error_text,
    result_text,
    scrub,
    short_job,
)
from duckflow.channels.turnclock import TurnClock
from duckflow.channels.writing import WritingWatch, said

Level = Literal["person", "verbose", "debug"]
LEVELS: dict[str, int] = {"person": 0, "verbose": 1, "debug": 2}
Kind = Literal["prose", "action", "approval", "answer", "stop", "error", "note", "detail", "status"]

MAIN, CHAT = "companion", "companion.chat"  # the person-facing agents; others write protocol text
PROSE_AGENTS = (MAIN, CHAT, "chat", "worker", "coder", "router")  # "chat": the Chat role
_RESULT_LINE = re.compile(r"^- \w+\(.*\) → (ok|error|refused|proposed)")
_WAITING = re.compile(r"^(Waiting for your approval|approval: waiting|\(plan plan-\S+ \w+\)$)", re.I)
_STEP_WORDS = re.compile(r"\b(PLANNING|EXECUTION|REVIEW|AWAITING_APPROVAL|REQUIRES_USER_INPUT|IN_PROGRESS)\b")
# notices a person reads by default (the rest: --verbose / --debug)
PERSON_NOTICES = {"approval_stale": "", "proposed": "Proposed, not run: ",
                  "refused_call": "Refused: ", "question": "", "constraint": "", "paused": "",
                  "overwrite": "", "rename": "", "copied_example": "", "bundled_model": "", "loading": "",
                  "router": "", "delegated": "", "project_notes": "", "mcp": "", "budget": "",
                  "unchanged": "No change: ", "answered": "", "tests_kept": "",
                  "expectation": ""}
ASKED_AGAIN = {"reasked": "The model's reply could not be used; asking it again.",
               "reply_unusable": "The model's reply still could not be used after asking again."}
VERBOSE_NOTICES = ("auto_approved", "vitals", "plan_progress", "deviation", "plan_no_actions", "codec")  # raw_reply: --debug
ENDINGS = {
    "no_progress": "I stopped: the last turns changed nothing. Tell me what to do differently.",
    "max_turns": "I stopped at the turn limit before finishing. Say \"continue\" to go on.",
    "blocked": "I stopped: the token budget for this session is used up.",
    "input": "",  # the reply above already asks
    "error": "Something failed (see above).",
    "budget": "",  # the reply above says what it tried before the budget ran out
}


@dataclass
class Line:
    kind: Kind
    text: str
    level: Level = "person"
    data: dict[str, Any] = field(default_factory=dict)  # e.g. the approval card's parts


def visible(line: Line, level: str) -> bool:
    return LEVELS[line.level] <= LEVELS.get(level, 0)


def ending_sentence(ending: str, message: str = "") -> str:
    """A plain sentence for how a task stopped ('' when the reply already said it)."""
    if ending in ("done", "approval", "input", "stopped"):  # stopped: a routed role's reply said why
        return ""
    return ENDINGS.get(ending) or (scrub(message.splitlines()[0]) if message else f"I stopped ({ending}).")


class Presenter:
    """Turns chunks into Lines, remembering what streamed and which call a result answers."""

    def __init__(self) -> None:
        self.streamed: dict[str, str] = {}  # per agent: text streamed since its last reply
        self.calls: dict[str, tuple[str, dict[str, Any]]] = {}  # tool call id → (name, arguments)
        self.diffs: dict[str, str] = {}  # path → the diff its approval showed
        self.tokens = 0  # streamed pieces of the current model call
        self.chars = 0  # and their characters (the status line counts them as they arrive)
        self.waiting = ""  # what the status line says is being waited on
        self.watch: dict[str, WritingWatch] = {}  # per agent: the file lines and commands it writes
        self.clock = TurnClock()  # the turn's time, tokens and where the time went

    def feed(self, chunk: Any) -> list[Line]:
        kind = getattr(chunk, "type", "")
        lines = list(getattr(self, f"_on_{kind}", self._other)(chunk, chunk.data))
        ended = self.clock.feed(chunk)  # the quiet line that ends a turn
        if ended:
            lines.append(Line("detail", ended, data={"turn_end": True}))
        return lines

    def _other(self, chunk: Any, d: Any) -> list[Line]:
        return [Line("detail", f"{chunk.type}: {d}", "debug")]

    def _status(self, text: str) -> Line:
        self.waiting = text
        return Line("status", text)

    def _on_progress(self, chunk: Any, d: Any) -> list[Line]:
        if d.phase == "end":
            self.waiting = ""
            return [Line("status", ""), Line("detail", f"{d.what} took {d.elapsed_ms / 1000:.1f} s", "debug")]
        self.tokens = self.chars = 0
        if d.what.startswith("asking "):  # a new model call: its text is read afresh
            self.watch.pop(chunk.agent, None)
        what = d.what
        if what.startswith("asking "):  # the engine's "asking MODEL (layer)": the model reads the prompt first
            what = "Reading the prompt"
        return [self._status(what[:1].upper() + what[1:]), Line("detail", d.what, "verbose")]

    def _on_delta(self, chunk: Any, d: Any) -> list[Line]:
        self.streamed[chunk.agent] = self.streamed.get(chunk.agent, "") + d.text
        self.tokens += 1
        self.chars += len(d.text)
        if chunk.agent in PROSE_AGENTS:
            return [Line("prose", d.text, data={"agent": chunk.agent})]
        seen = self.watch.setdefault(chunk.agent, WritingWatch()).feed(d.text)  # what it writes, as it writes
        return [Line("detail", d.text, "verbose", {"agent": chunk.agent, "stream": True}), *self._written(seen)]

    def _on_tool_call_delta(self, chunk: Any, d: Any) -> list[Line]:
        """A native call as it forms: its file's lines, its command (the same lines as a text protocol's)."""
        self.chars += len(d.text)
        return self._written(self.watch.setdefault(chunk.agent, WritingWatch()).call(d))

    def _written(self, seen: list[Any]) -> list[Line]:
        """The lines seen, and the status: the file or command being written, else the characters so far."""
        named = self.waiting.startswith("Writing ") and not self.waiting.startswith("Writing · ")
        shown, status = said(seen, self.waiting if named else f"Writing · {self.chars} characters")
        return [*(Line("detail", text, data={"writing": what}) for text, what in shown), self._status(status)]

    def _on_reply(self, chunk: Any, d: Any) -> list[Line]:
        self.watch.clear()
        streamed = self.streamed.pop(chunk.agent, "")
        if chunk.agent == MAIN:
            for agent in [a for a in self.streamed if a != CHAT]:
                self.streamed.pop(agent)
        text = d.text[len(streamed):] if streamed and d.text.startswith(streamed) else d.text
        kept = _said_lines(text)
        body = scrub("\n".join(kept)).strip()
        out = [Line("prose", "", data={"agent": chunk.agent, "end": True})]
        if body:
            out.append(Line("prose", body, data={"agent": chunk.agent, "block": True}))
        return out

    def _on_decision(self, chunk: Any, d: Any) -> list[Line]:
        return [Line("detail", f"💭 {d.rationale}  [{d.step} · {d.pattern}]", "verbose")]

    def _on_state(self, chunk: Any, d: Any) -> list[Line]:
        if d.allowed:
            said = d.reason if "→" in d.reason else f"{d.from_step} → {d.to_step}: {d.reason}"
            return [Line("detail", f"↪ {said}", "verbose")]
        return [Line("detail", f"⛔ {d.reason}", "debug")]

    def _on_plan(self, chunk: Any, d: Any) -> list[Line]:
        states = d.states or ["pending"] * len(d.actions)
        marks = {"done": "✓", "failed": "✗", "running": "…", "skipped": "-", "pending": "·"}
        listed = " · ".join(f"{marks.get(s, '·')} {a}" for a, s in zip(d.actions, states, strict=False))
        out = [Line("detail", f"plan {d.plan_id} {d.status}: {listed}", "verbose")]
        if d.status == "proposed" and d.actions:
            steps = [plan_step(a) for a in d.actions]
            out.insert(0, Line("note", "Plan: " + ", ".join(s for s in steps if s)))
        return out

    def _on_tool_call(self, chunk: Any, d: Any) -> list[Line]:
        self.calls[d.id or d.name] = (d.name, dict(d.arguments))
        args = {k: (v if len(str(v)) < 200 else f"{str(v)[:200]}…") for k, v in d.arguments.items()}
        return [self._status(action_text(d.name, d.arguments)),
                Line("detail", f"→ {d.name} {json.dumps(args, ensure_ascii=False)}", "verbose")]

    def _on_tool_response(self, chunk: Any, d: Any) -> list[Line]:
        name, args = self.calls.pop(d.id or d.name, (d.name, {}))
        self.waiting = ""
        said = action_text(name, args, self.diffs.pop(str(args.get("path", "")), ""))
        raw = Line("detail", f"{'✗' if d.is_error else '✓'} {d.name}: {' '.join(d.content.split())[:300]}",
                   "verbose")
        if d.is_error:
            return [Line("status", ""), Line("action", f"{said} ✗ {error_text(d.content)}",
                                              data={"ok": False}), raw]
        more = result_text(name, d.content)
        return [Line("status", ""), Line("action", f"{said} {more}".rstrip(), data={"ok": True}), raw]

    def _on_approval(self, chunk: Any, d: Any) -> list[Line]:
        if d.phase == "request":
            parts = card(d.request, d.call, d.job_id)
            for path in (d.request.get("operation") or {}).get("paths") or []:
                self.diffs[str(path)] = parts["diff"]
            return [Line("status", ""), Line("approval", parts["headline"], data=parts)]
        by = "" if not d.by or d.by.startswith("user") else \
            " automatically" if d.by.startswith("auto") else f" ({d.by})"
        word = "Approved" if d.granted else "Denied"
        return [Line("answer", f"{word}{by}", data={"granted": bool(d.granted), "job": short_job(d.job_id),
                                                    "auto": bool(d.by and d.by.startswith("auto"))})]

    def _on_notice(self, chunk: Any, d: Any) -> list[Line]:
        if d.code == "route":  # a line only when the route changes (none for conversation)
            said = str(d.details.get("declaration") or "")
            return [Line("note", f"» {said}")] if said else [Line("detail", f"ℹ {d.message}", "debug")]
        if d.code in PERSON_NOTICES:
            said = re.sub(r"^paused during \w+", "Paused", scrub(d.message))
            asked = {k: d.details[k] for k in ("question", "options") if k in d.details} if d.code == "question" else {}
            return [Line("note", PERSON_NOTICES[d.code] + person_words(said), data=asked)]  # (options: buttons)
        if d.code in ASKED_AGAIN:  # why a wait got longer, in a person's words; the reason with --verbose
            return [Line("note", ASKED_AGAIN[d.code]), Line("detail", f"ℹ {scrub(d.message)}", "verbose")]
        if "could not" in d.message:
            return [Line("note", scrub(d.message))]
        return [Line("detail", f"ℹ {d.message}", "verbose" if d.code in VERBOSE_NOTICES else "debug")]

    def _on_warning(self, chunk: Any, d: Any) -> list[Line]:
        return [Line("note", f"⚠ {scrub(d.message)}")]

    def _on_error(self, chunk: Any, d: Any) -> list[Line]:
        self.waiting = ""
        text = scrub(d.message) + (f" — next: {d.hint}" if d.hint else "")
        return [Line("status", ""), Line("error", text)]

    def _on_usage(self, chunk: Any, d: Any) -> list[Line]:
        total = f" (session {d.session_total})" if d.session_total is not None else ""
        return [Line("detail", f"tokens {d.prompt_tokens}+{d.completion_tokens}{total}", "debug")]

    def _on_done(self, chunk: Any, d: Any) -> list[Line]:
        self.waiting = ""
        said = ending_sentence(d.ending or "done", d.text)
        out = [Line("status", "")]
        if said and chunk.agent == MAIN:
            out.append(Line("stop", said))
        return out

    def _on_handoff(self, chunk: Any, d: Any) -> list[Line]:
        return [Line("detail", f"handoff {d.phase}: {d.source} → {d.target}", "verbose")]


def plan_step(action: str) -> str:
    """One planned action in words: `create hello.py`, `look at the folder`."""
    return re.sub(r"^(read|list) \.$", "look at the folder", scrub(action.split(":")[0]))


def _said_lines(text: str) -> list[str]:
    """A reply's lines without the engine's result and waiting lines; a waiting line that names a
    task of several lines (`... (write_file for: fix it\nand this…)`) is dropped up to its `)`."""
    kept: list[str] = []
    open_task = False
    for ln in text.strip().splitlines():
        if open_task:
            open_task = not ln.rstrip().endswith(")")
            continue
        if _WAITING.match(ln):
            open_task = ln.count("(") > ln.count(")")
            continue
        if not _RESULT_LINE.match(ln):
            kept.append(ln)
    return kept


def person_words(text: str) -> str:
    """A status or step word said plainly (`PLANNING` → `planning`), for lines a person reads."""
    return _STEP_WORDS.sub(lambda m: m.group(1).lower().replace("_", " "), text)
