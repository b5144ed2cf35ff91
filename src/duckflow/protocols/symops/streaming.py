"""StreamingProcessor (seed 000 §5.2): reads a reply as it arrives and emits each item once complete.

It is the strict `Scanner` (the one reader of the grammar, used one-shot by `parse` too) with
events. Feed it pieces of any size (down to one character). A thought is emitted when its
line ends, a question when its options end, an action when its block closes (or, with no
block, as soon as the next line begins with anything but a fence). The work is linear in the
input: every line is looked at once, text inside an open block is only checked for its
closing fence, and the pieces fed are packed as they come so memory stays near the input.

`finish()` returns exactly what `parse()` returns for the whole text: when the stream was
strict Sym-Ops the scanner's own result is used; otherwise the whole text goes through the
repair pipeline once. Items emitted along the way are previews: an action is marked
`executable` only while the stream is still strict, and the final result decides.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable
from typing import Any, Literal

from duckflow.protocols.symops.model import Action, SymOpsResult
from duckflow.protocols.symops.processor import finish_strict, process_repaired
from duckflow.protocols.symops.scanner import Scanner
from duckflow.protocols.symops.validator import attach_hunks, check_action, plainly_valid

__all__ = ["EventKind", "StreamEvent", "StreamingProcessor"]

EventKind = Literal["thought", "vitals", "action", "question", "error", "prose"]


class StreamEvent(tuple[str, Any]):
    """One complete item: `kind` and the item (str, dict, Action, Question or Note)."""

    __slots__ = ()

    @property
    def kind(self) -> EventKind:
        return self[0]  # type: ignore[return-value]

    @property
    def item(self) -> Any:
        return self[1]


class StreamingProcessor(Scanner):
    """`feed(piece) -> events completed by it`, then `finish() -> SymOpsResult` (== parse).

    `feed` is the Scanner's own (one call per piece): it returns the items the piece completed.
    """

    def __init__(self, *, request: str | None = None, on_event: Callable[[StreamEvent], None] | None = None,
                 prose: bool = False) -> None:  # fmt: skip
        """`prose=True`: lines that are not protocol are items too (`prose`), for display."""
        super().__init__(emit=self._item)
        self.want_prose = prose
        self.request = request
        self.on_event = on_event
        self.final: SymOpsResult | None = None
        self.tail_events: list[StreamEvent] = []  # items completed by finish() itself

    def _item(self, kind: str, item: Any) -> None:
        if kind == "action" and isinstance(item, Action):
            if item.type == "edit":
                attach_hunks(item)
            if self.violations or (not plainly_valid(item) and check_action(item)):
                item.executable = False
        ev = StreamEvent((kind, item))
        self.events.append(ev)
        if self.on_event is not None:
            self.on_event(ev)

    def finish(self) -> SymOpsResult:
        """The final result for everything fed — equal to `parse(text)`."""
        if self.final is None:
            super().finish()
            self.tail_events, self.events = self.events, []
            if not self.violations:  # strict throughout: only blankness is asked of the text
                first = next((p for p in self.pieces if p and not p.isspace()), "")
                self.final = finish_strict(self.result, first)
            else:
                self.final = process_repaired(self.text, self.request)
        return self.final

    close = finish

    async def stream(self, pieces: AsyncIterable[str]) -> AsyncIterator[StreamEvent]:
        """Consume an async stream of text pieces, yielding items as they complete."""
        async for piece in pieces:
            for ev in self.feed(piece):
                yield ev
        self.finish()
        for ev in self.tail_events:
            yield ev
