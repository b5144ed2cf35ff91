"""Reads a native tool call's arguments while they stream: the decoded text of each string value as it grows.

A provider streams a call's `arguments` as fragments of one JSON object (`{"path": "a.py",
"content": "import sys\\nprint(`…), cut anywhere — inside an escape, between the two halves of
a `\\uD83D\\uDE00` surrogate pair. `ArgsReader.feed(fragment)` returns what each top-level string
value gained since the last fragment, decoded, and which values are complete. The parsing is
pydantic-core's partial JSON (`from_json(allow_partial="trailing-strings")`, already a dependency):
a trailing string is read up to its last whole character (an escape or a pair cut in two is held
back until it is whole), so every value only grows. Text that is not a JSON object yields nothing.
Each reading parses the text so far: the engine reads at most 20 times a second (`every_s`), so a
fast stream of a long file costs a few readings a second, and a slow local model's every piece shows.
Only to show the call as it forms (channels/present.py): the complete call is parsed on its own.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Grown:
    """A top-level string value that grew by `text`, or (`done`) that is complete."""

    key: str
    text: str = ""
    done: bool = False


class ArgsReader:
    """`every_s` > 0: read at most that often (each reading parses the text so far, so a fast
    stream of a long file is read a few times a second, not once per piece); `close` reads the rest."""

    def __init__(self, every_s: float = 0.0) -> None:
        self.parts: list[str] = []
        self.said: dict[str, str] = {}  # per key: the decoded text given out so far
        self.closed: set[str] = set()
        self.broken = False  # not a JSON object, or a value that shrank: nothing more is read
        self.every_s = every_s
        self.read_at = 0.0
        self.unread = False

    def feed(self, fragment: str) -> list[Grown]:
        if self.broken or not fragment:
            return []
        self.parts.append(fragment)
        self.unread = True
        if self.every_s:
            now = time.monotonic()
            if now - self.read_at < self.every_s:
                return []
            self.read_at = now
        return self._read()

    def _read(self) -> list[Grown]:
        from pydantic_core import from_json

        self.unread = False

        try:
            value: Any = from_json("".join(self.parts), allow_partial="trailing-strings")
        except ValueError:
            return []  # e.g. cut inside a number or a key: the next fragment completes it
        except TypeError:  # a pydantic-core older than its trailing-strings mode: nothing shows
            self.broken = True
            return []
        if not isinstance(value, dict):
            self.broken = value is not None
            return []
        out: list[Grown] = []
        keys = list(value)
        for i, key in enumerate(keys):
            now = value[key]
            if not isinstance(now, str) or key in self.closed:
                continue
            before = self.said.get(key, "")
            if not now.startswith(before):  # a reading that changed its mind: stop showing it
                self.broken = True
                return out
            if len(now) > len(before):
                out.append(Grown(key, now[len(before):]))
            self.said[key] = now
            if i < len(keys) - 1:  # a later key has begun: this value is complete
                self.closed.add(key)
                out.append(Grown(key, done=True))
        return out

    def close(self) -> list[Grown]:
        """The call is complete: what was not read yet, and every value still open is done."""
        out = self._read() if self.unread and not self.broken else []
        open_keys = [k for k in self.said if k not in self.closed]
        self.closed.update(open_keys)
        return [*out, *(Grown(k, done=True) for k in open_keys)]
