"""Regular expressions compiled on first use: `LazyPattern("...", re.I).search(text)`.

`re.compile` parses and compiles in pure Python (0.1–1 ms a pattern); a module that defines
dozens of patterns at import makes every start-up pay for all of them, although one run
usually needs a few (the security rules are gated by cheap literal needles, the router's
rules are tried in order and the first match wins). A `LazyPattern` compiles the first time
it is used and then behaves like the compiled pattern; `is_compiled` says whether that happened.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any


class LazyPattern:
    """A `re.Pattern[str]` that is compiled the first time a method or attribute needs it."""

    __slots__ = ("pattern", "_flags", "_re")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self._flags = flags
        self._re: re.Pattern[str] | None = None

    @property
    def regex(self) -> re.Pattern[str]:
        """The compiled pattern (compiled now if it was not yet; a race compiles twice, harmlessly)."""
        compiled = self._re
        if compiled is None:
            compiled = self._re = re.compile(self.pattern, self._flags)
        return compiled

    @property
    def is_compiled(self) -> bool:
        return self._re is not None

    @property
    def flags(self) -> int:
        return self.regex.flags

    @property
    def groups(self) -> int:
        return self.regex.groups

    def search(self, string: str, *args: int) -> re.Match[str] | None:
        return self.regex.search(string, *args)

    def match(self, string: str, *args: int) -> re.Match[str] | None:
        return self.regex.match(string, *args)

    def fullmatch(self, string: str, *args: int) -> re.Match[str] | None:
        return self.regex.fullmatch(string, *args)

    def finditer(self, string: str, *args: int) -> Iterator[re.Match[str]]:
        return self.regex.finditer(string, *args)

    def findall(self, string: str, *args: int) -> list[Any]:
        return self.regex.findall(string, *args)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self.regex.sub(repl, string, count)

    def subn(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> tuple[str, int]:
        return self.regex.subn(repl, string, count)

    def split(self, string: str, maxsplit: int = 0) -> list[str | Any]:
        return self.regex.split(string, maxsplit)

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r}, {self._flags}{', compiled' if self._re is not None else ''})"


# what code that takes "a compiled pattern" accepts: a real one or a lazy one
Regex = re.Pattern[str] | LazyPattern
