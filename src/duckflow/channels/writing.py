"""What a model is writing, as it writes it: the file's lines as they come and the command it forms.

A Sym-Ops reply streams as protocol text (`$ create @ hello.py`, a `---` block, `$ run @ python3
hello.py`). `WritingWatch.feed(text)` reads it line by line as it arrives and returns what a person
can follow: each new line of the file being written (with its number), and each command once its
line is complete. Other text (thoughts, vitals, markers) is left to --verbose. A slow local model
takes minutes over a file: this is what the wait shows (channels/present.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ACTION = re.compile(r"^\$\s*(\w+)\s*@\s*(.+?)\s*$")
_FENCE = re.compile(r"^-{3,}\s*$")
FILE_VERBS = ("create", "edit", "write", "append")
RUN_VERBS = ("run", "test", "exec", "execute", "shell")


@dataclass(frozen=True)
class Seen:
    """One thing being written: a file's line (`path`, `number`, `text`) or a command (`command`)."""

    path: str = ""
    number: int = 0
    text: str = ""
    command: str = ""


class WritingWatch:
    def __init__(self) -> None:
        self.pending = ""
        self.target = ""  # the file the open block writes
        self.fence = ""
        self.number = 0

    def feed(self, text: str) -> list[Seen]:
        self.pending += text
        if "\n" not in self.pending:
            return []
        done, _, self.pending = self.pending.rpartition("\n")
        out: list[Seen] = []
        for line in done.split("\n"):
            out += self._line(line)
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
