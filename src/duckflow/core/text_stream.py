"""Streams the free text of a text-codec reply line by line, before the reply is complete.

A text codec (Sym-Ops, DML) can only decode a whole reply, but the lines before the first
protocol markup are plain prose a person can read while the model writes. At each newline
the reply so far is decoded: while it holds no calls, no errors and its text is the text
itself, the new complete lines are emitted. From the first line that is not plain text on,
nothing more streams; the rest of the visible text is emitted once the reply is decoded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from duckflow.llm.types import ToolSpec
from duckflow.protocols.codec import Codec


class FreeTextStreamer:
    def __init__(self, codec: Codec, specs: Sequence[ToolSpec], emit: Callable[[str], None]) -> None:
        self.codec = codec
        self.specs = specs
        self.emit = emit
        self.parts: list[str] = []
        self.streamed = ""
        self.open = True

    def feed(self, text: str) -> None:
        self.parts.append(text)
        if not self.open or "\n" not in text:
            return
        whole = "".join(self.parts)
        candidate = whole[: whole.rfind("\n") + 1]
        decoded = self.codec.decode(candidate, self.specs)
        if decoded.calls or decoded.errors or decoded.text.strip() != candidate.strip():
            self.open = False
            return
        if len(candidate) > len(self.streamed) and candidate.strip():
            self.emit(candidate[len(self.streamed):])
            self.streamed = candidate

    def rest(self, visible: str) -> str:
        """The part of the decoded `visible` text not streamed yet."""
        done = self.streamed.strip()
        if not done:
            return visible
        if visible.startswith(done):
            return visible[len(done):]
        return visible  # the codec re-read earlier lines: show its reading in full
