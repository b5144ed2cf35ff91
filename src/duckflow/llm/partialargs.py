"""Reads a native tool call's arguments while they stream: the decoded text of each string value as it grows.

A provider streams a call's `arguments` as fragments of one JSON object (`{"path": "a.py",
"content": "import sys\\nprint(`…), cut anywhere — inside an escape, between the two halves of
a `\\uD83D\\uDE00` surrogate pair. `ArgsReader.feed(fragment)` returns what each top-level string
value gained since the last fragment, decoded, and which values are complete. The parsing is
pydantic-core's partial JSON (`from_json(allow_partial="trailing-strings")`, already a dependency):
a trailing string is read up to its last whole character (an escape or a pair cut in two is held
back until it is whole), so every value only grows. Text that is not a JSON object yields nothing.
Only to show the call as it forms (channels/present.py): the complete call is parsed on its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Grown:
    """A top-level string value that grew by `text`, or (`done`) that is complete."""

    key: str
    text: str = ""
    done: bool = False


class ArgsReader:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.said: dict[str, str] = {}  # per key: the decoded text given out so far
        self.closed: set[str] = set()
        self.broken = False  # not a JSON object, or a value that shrank: nothing more is read

    def feed(self, fragment: str) -> list[Grown]:
        if self.broken or not fragment:
            return []
        self.parts.append(fragment)
        from pydantic_core import from_json

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
        """The call is complete: every value still open is done."""
        open_keys = [k for k in self.said if k not in self.closed]
        self.closed.update(open_keys)
        return [Grown(k, done=True) for k in open_keys]
