"""What a model is writing, as it writes it: the file's lines as they come and the command it forms.

Three ways a model writes a file, one result. A Sym-Ops reply streams as protocol text (`$ create @
hello.py`, a `---` block, `$ run @ python3 hello.py`); a DML reply too (`🦆▶️[T:write_file|hello.py|`,
the lines, `]◀️🦆`; `🦆▶️[T:execute_shell|python3 hello.py]◀️🦆`): `WritingWatch.feed(text)` reads
it line by line as it arrives. A native tool call streams its JSON arguments, which the engine
decodes as they grow (`tool_call_delta` chunks, llm/partialargs.py): `WritingWatch.call(data)`
reads those. Either way it returns what a person can follow: each new line of the file being
written (with its number), each command once it is complete, and a command still being formed
(`forming`, for the status line). Other text (thoughts, vitals, markers) is left to --verbose. A
slow local model takes minutes over a file: this is what the wait shows (channels/present.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

_ACTION = re.compile(r"^\$\s*(\w+)\s*@\s*(.+?)\s*$")
_FENCE = re.compile(r"^-{3,}\s*$")
# a DML tool macro's head and end, as tolerant as protocols/dml/parser.py (no variation selector, spaces)
_DML_OPEN = re.compile("\U0001f986[ \t]?\u25b6[\ufe0e\ufe0f]?[ \t]?\\[\\s*T\\s*[:\uff1a]\\s*(\\w+)\\s*\\|(.*)$")
_DML_CLOSE = re.compile("\\][ \t]?\u25c0[\ufe0e\ufe0f]?[ \t]?\U0001f986")
FILE_VERBS = ("create", "edit", "write", "append")
RUN_VERBS = ("run", "test", "exec", "execute", "shell")
FILE_TOOLS = ("write_file", "edit_file", "append_file", "create_file")
RUN_TOOLS = ("execute_shell", "run_tests", "run_command", "shell")


@dataclass(frozen=True)
class Seen:
    """One thing being written: a file's line (`path`, `number`, `text`) or a command (`command`;
    `forming`: not complete yet)."""

    path: str = ""
    number: int = 0
    text: str = ""
    command: str = ""
    forming: bool = False


@dataclass
class _Call:
    """A native call as its arguments stream: its path, the content's unfinished line, its command."""

    path: str = ""
    line: str = ""
    number: int = 0
    command: str = ""


@dataclass
class WritingWatch:
    pending: str = ""
    target: str = ""  # the file the open block writes
    fence: str = ""
    number: int = 0
    dml: bool = False  # inside a DML macro's file text (until `]◀️🦆`)
    calls: dict[str, _Call] = field(default_factory=dict)

    def feed(self, text: str) -> list[Seen]:
        self.pending += text
        if "\n" not in self.pending:
            return []
        done, _, self.pending = self.pending.rpartition("\n")
        out: list[Seen] = []
        for line in done.split("\n"):
            out += self._dml(line) if self.dml or _DML_OPEN.search(line) else self._line(line)
        return out

    def _line(self, line: str) -> list[Seen]:
        if self.fence:
            if line.strip() == self.fence:
                self.fence, self.target = "", ""
                return []
            if not self.target:
                return []
            self.number += 1
            return [Seen(self.target, self.number, line)]
        if _FENCE.match(line):
            self.fence = line.strip()
            self.number = 0
            return []
        m = _ACTION.match(line)
        if m is None:
            return []
        verb, target = m.group(1).lower(), m.group(2)
        if verb in FILE_VERBS:
            self.target = target
            return []
        self.target = ""
        return [Seen(command=target)] if verb in RUN_VERBS else []

    def _dml(self, line: str) -> list[Seen]:
        """A line of a DML reply: a macro's head, a line of its file text, or its end."""
        body = line
        if not self.dml:
            m = _DML_OPEN.search(line)
            assert m is not None
            tool, rest = m.group(1).lower(), m.group(2)
            if tool in RUN_TOOLS:
                command = _DML_CLOSE.split(rest)[0].strip()
                return [Seen(command=command)] if command else []
            if tool not in FILE_TOOLS:
                return []
            self.target, _, body = rest.partition("|")
            self.target, self.number, self.dml = self.target.strip(), 0, True
            if not body.strip():
                return []
        closed = _DML_CLOSE.search(body)
        text, target = (body[:closed.start()] if closed else body), self.target
        if closed:
            self.dml, self.target = False, ""
            if not text.strip():
                return []
        self.number += 1
        return [Seen(target, self.number, text)]

    def call(self, d: Any) -> list[Seen]:
        """A `tool_call_delta` chunk's data: a native call's argument grew (or is complete)."""
        call = self.calls.setdefault(d.id, _Call())
        if d.key == "path":
            call.path += d.text
            return []
        if d.key == "command" and (d.name in RUN_TOOLS or not d.name):
            call.command += d.text
            if d.done:
                return [Seen(command=call.command.strip())] if call.command.strip() else []
            return [Seen(command=call.command.strip(), forming=True)] if d.text else []
        if d.key != "content" or (d.name and d.name not in FILE_TOOLS):
            return []
        *lines, call.line = (call.line + d.text).split("\n")
        if d.done and call.line:
            lines, call.line = [*lines, call.line], ""
        out = []
        for text in lines:
            call.number += 1
            out.append(Seen(call.path or "the file", call.number, text))
        return out


def said(seen: list[Seen], status: str) -> tuple[list[tuple[str, str]], str]:
    """What was seen as lines a person reads, each with what it writes (a path, or `command`),
    and the status line after them: `Writing greet.py · line 5`, `Writing a command · $ pyth…`."""
    lines: list[tuple[str, str]] = []
    for s in seen:
        if s.command:
            status = f"Writing a command · $ {s.command[-60:]}"
            if not s.forming:
                lines.append((f"  $ {s.command}", "command"))
        else:
            if s.number == 1:
                lines.append((f"  Writing {s.path}:", s.path))
            lines.append((f"  {s.number:>3} │ {s.text}", s.path))
            status = f"Writing {s.path} · line {s.number}"
    return lines, status
