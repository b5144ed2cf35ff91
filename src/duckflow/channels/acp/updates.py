"""The Chunk stream as ACP `session/update`s: prose as agent_message_chunk, each action as a tool_call and its updates.

Words come from the one presentation layer (channels/present.py), as every channel's do: the
model's prose streams as it is written, a note, a stop or an error is its own paragraph, and
an action's title and result are the lines the terminal shows (`Edit calc.py (+3 −0)`,
`Run pytest -q → exit 0, 4 lines`). A tool call opens as `tool_call` and closes as
`tool_call_update` (completed / failed); a write or an edit carries a `diff` (path, oldText,
newText) the editor can show, its old text read before the change and its new text after.
An approval opens the call it asks about (status pending, with the diff) under the call's
own id, so the run that follows updates the same entry. Only ACP's schema types are built
here; sending is the agent's (agent.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_plan,
    update_tool_call,
)
from acp.schema import ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolKind

from duckflow.channels.actionwords import action_text, card, card_text
from duckflow.channels.present import Presenter, plan_step, visible
from duckflow.toolkinds import kind_of

# Duckflow's tool kinds (toolkinds.py) as ACP's ToolKind
ACP_KINDS: dict[str, ToolKind] = {"read": "read", "list": "read", "search": "search", "write": "edit", "edit": "edit",
             "mkdir": "edit", "delete": "delete", "rename": "move", "execute": "execute", "test": "execute"}
SPOKEN = ("note", "stop", "error", "answer")  # lines that are a paragraph of their own
MAX_TEXT = 400_000  # a file's text sent as a diff side, at most (a bigger one is left out)
OUTPUT_CHARS = 4000  # of a command's output shown in its tool call (the end of it)
PLAN_STATES = {"pending": "pending", "running": "in_progress", "done": "completed", "failed": "completed",
               "skipped": "completed"}


def _output(content: str) -> str:
    """What a command printed (its end, cut to OUTPUT_CHARS), from its tool result; '' for other tools."""
    import json

    try:
        data = json.loads(content)
    except (ValueError, TypeError):
        return ""
    if not isinstance(data, dict) or "exit_code" not in data:
        return ""
    out = (str(data.get("stdout") or "") + str(data.get("stderr") or "")).rstrip("\n")
    return out if len(out) <= OUTPUT_CHARS else "…" + out[-OUTPUT_CHARS:]


def _key(name: str, args: dict[str, Any]) -> str:
    import json

    return name + json.dumps(args, sort_keys=True, default=str)


def acp_kind(tool: str) -> ToolKind:
    return ACP_KINDS.get(kind_of(tool), "other")


class Updates:
    """One prompt turn's translator: feed chunks, get the session updates to send, in order."""

    def __init__(self, root: str | Path, read_text: Any = None) -> None:
        self.root = Path(root)
        self.present = Presenter()
        self.read_text = read_text  # the session's guarded reader (ActionRunner.read_text): rel → text | None
        self.calls: dict[str, dict[str, Any]] = {}  # open tool call id → name, arguments, old text
        self.opened: set[str] = set()  # ids the editor has seen a tool_call for
        self.asked: dict[str, str] = {}  # a call asked about (name + arguments) → the id the editor knows it by
        self.alias: dict[str, str] = {}  # the id a call ran under → the id it was asked about under
        self.gap = False  # the last prose ended a paragraph: the next text starts a new one
        self.said = False  # anything written this turn

    # -- text -----------------------------------------------------------------------------
    def _text(self, text: str, paragraph: bool = False) -> list[Any]:
        if not text:
            return []
        if (paragraph or self.gap) and self.said:
            text = "\n\n" + text.lstrip("\n")
        self.gap = paragraph
        self.said = True
        return [update_agent_message_text(text)]

    def say(self, text: str) -> list[Any]:
        """A sentence of the agent's own (a question after a refusal, a note)."""
        return self._text(text, paragraph=True)

    # -- chunks ---------------------------------------------------------------------------
    def feed(self, chunk: Any) -> list[Any]:
        lines = self.present.feed(chunk)
        out: list[Any] = []
        kind = getattr(chunk, "type", "")
        if kind == "tool_call":
            out += self._open(chunk.data.id or chunk.data.name, chunk.data.name, dict(chunk.data.arguments))
        if kind == "plan" and chunk.data.actions:
            out.append(self._plan(chunk.data))
        for line in lines:
            if not visible(line, "person") or kind == "plan":  # the plan is the editor's plan view
                continue
            if line.kind == "prose":
                if line.data.get("end"):
                    self.gap = True
                else:
                    out += self._text(line.text, paragraph=bool(line.data.get("block")))
            elif line.kind == "action" and kind == "tool_response":
                out += self._close(chunk.data.id or chunk.data.name, line.text, bool(line.data.get("ok")),
                                   _output(chunk.data.content))
            elif line.kind in SPOKEN:
                out += self._text(line.text, paragraph=True)
        return out

    def _open(self, call_id: str, name: str, args: dict[str, Any], *, pending: bool = False) -> list[Any]:
        key = _key(name, args)
        if pending:
            self.asked[key] = call_id
        elif call_id not in self.opened and key in self.asked:  # the asked call runs under another id
            asked_as = self.asked.pop(key)
            self.alias[call_id] = asked_as
            call_id = asked_as
        path = str(args.get("path") or args.get("src") or "")
        entry = self.calls.setdefault(call_id, {"name": name, "args": args, "path": path,
                                                "old": self._old(name, path)})
        title = action_text(name, args)
        status: ToolCallStatus = "pending" if pending else "in_progress"
        if call_id in self.opened:
            return [update_tool_call(call_id, status=status)]
        self.opened.add(call_id)
        content = self._diff(entry, proposed=True) if name in ("write_file", "edit_file") else None
        return [start_tool_call(call_id, title, kind=acp_kind(name), status=status,
                                content=content, locations=self._where(path), raw_input=args)]

    def _plan(self, d: Any) -> Any:
        """The plan as the editor's plan entries; a failed or skipped step is done, and says so."""
        states = list(d.states) or ["pending"] * len(d.actions)
        entries = []
        for action, state in zip(d.actions, states + ["pending"] * (len(d.actions) - len(states)), strict=False):
            said = plan_step(action) or action
            if state in ("failed", "skipped"):
                said = f"{said} ({state})"
            entries.append(plan_entry(said, status=PLAN_STATES.get(state, "pending")))  # type: ignore[arg-type]
        return update_plan(entries)

    def _close(self, call_id: str, said: str, ok: bool, output: str = "") -> list[Any]:
        call_id = self.alias.pop(call_id, call_id)
        entry = self.calls.pop(call_id, None) or {}
        content: list[Any] = [tool_content(text_block(said))]
        if output:
            content.append(tool_content(text_block(f"```\n{output}\n```")))
        if ok and entry.get("name") in ("write_file", "edit_file"):
            content = self._diff(entry, proposed=False) + content
        self.opened.discard(call_id)
        return [update_tool_call(call_id, title=said, status="completed" if ok else "failed", content=content)]

    # -- the approval ---------------------------------------------------------------------
    def permission_call(self, job_id: str, request: dict[str, Any], call: dict[str, Any] | None
                        ) -> tuple[list[Any], ToolCallUpdate]:
        """What the editor is asked about: the call opened as pending (with its diff) and the
        ToolCallUpdate for `session/request_permission`, under the call's own id."""
        call = call or {}
        name = str(call.get("name") or (request.get("operation") or {}).get("tool") or "")
        args = dict(call.get("arguments") or {})
        call_id = str(call.get("id") or f"job-{job_id}")
        parts = card(request, call, job_id)
        opened = self._open(call_id, name, args, pending=True) if name else [
            start_tool_call(call_id, parts["headline"], kind="edit", status="pending")]
        self.opened.add(call_id)
        entry = self.calls.get(call_id, {})
        content: list[Any] = self._diff(entry, proposed=True) if name in ("write_file", "edit_file") else []
        content.append(tool_content(text_block(card_text(parts, diff_lines=0 if content else 40))))
        paths = [str(p) for p in (request.get("operation") or {}).get("paths") or []]
        asked = ToolCallUpdate(tool_call_id=call_id, title=parts["headline"], kind=acp_kind(name) if name else "edit",
                               status="pending", content=content,
                               locations=[loc for p in paths for loc in self._where(p)] or None)
        return opened, asked

    # -- files ----------------------------------------------------------------------------
    def _old(self, name: str, path: str) -> str | None:
        if name not in ("write_file", "edit_file") or not path or self.read_text is None:
            return None
        text = self.read_text(path)
        return text if text is None or len(text) <= MAX_TEXT else None

    def _diff(self, entry: dict[str, Any], *, proposed: bool) -> list[Any]:
        """The write's diff: old text as it was, new text as proposed (from the call) or as written."""
        path = entry.get("path") or ""
        if not path:
            return []
        new = self._proposed(entry) if proposed else (self.read_text(path) if self.read_text else None)
        if new is None or len(new) > MAX_TEXT:
            return []
        return [tool_diff_content(str(self.root / path), new, entry.get("old"))]

    def _proposed(self, entry: dict[str, Any]) -> str | None:
        content = str(entry["args"].get("content", ""))
        if entry["name"] == "write_file":
            return content
        from duckflow.protocols.editblocks import apply_hunks, parse_hunks

        hunks = parse_hunks(content)
        if hunks is None:
            return content
        applied = apply_hunks(entry.get("old") or "", hunks)
        return applied.text if applied.ok else None

    def _where(self, path: str) -> list[ToolCallLocation]:
        return [ToolCallLocation(path=str(self.root / path))] if path else []
