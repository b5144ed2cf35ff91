"""SessionSequence: the per-session counter that stamps each chunk's `seq` (no pydantic here).

Kept apart from `duckflow.core.chunks` (which re-exports it) so that a `Session` can be made
without defining the chunk models: `from duckflow import Agent` stays cheap.
"""

from __future__ import annotations

import itertools
from typing import Protocol, TypeVar


class _Stamped(Protocol):
    seq: int


_C = TypeVar("_C", bound=_Stamped)  # a chunk (core/chunks.py), typed without importing the chunk models


class SessionSequence:
    """The per-session chunk counter; nested runs (handoffs, parallel tools) share one."""

    __slots__ = ("_counter", "last")

    def __init__(self, start: int = 1) -> None:
        self._counter = itertools.count(start)
        self.last = start - 1

    def stamp(self, chunk: _C) -> _C:
        chunk.seq = self.last = next(self._counter)
        return chunk
