"""StreamingProcessor (seed 000 §5.2): reads a reply as it arrives and emits each item once complete.

Feed it pieces of any size (down to one character). A thought is emitted when its line ends,
a question when its options end, an action when its block closes (or, with no block, as soon
as the next line begins with anything but a fence). The work is linear in the input: every
line is looked at once, and text inside an open block is only checked for its closing fence.

`finish()` returns exactly what `parse()` returns for the whole text: when the stream was
strict Sym-Ops the scanner's own result is used; otherwise the whole text goes through the
repair pipeline once. Items emitted along the way are previews: an action is marked
`executable` only while the stream is still strict, and the final result decides.

Speed: while the stream is plainly canonical, `feed` is the `send` of the lean reader in
`streamfast.py` (one generator resume per piece, state in its locals). At the first line the
lean reader is not sure of, everything fed so far is replayed once through the full `Scanner`
(the items already emitted are not emitted again) and the Scanner goes on.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable, Sequence
from typing import Any

from duckflow.protocols.symops.model import Action, SymOpsResult
from duckflow.protocols.symops.processor import finish_strict, process_repaired
from duckflow.protocols.symops.scanner import Scanner
from duckflow.protocols.symops.streamfast import (
    EventKind,
    Final,
    HandOver,
    Reader,
    StreamEvent,
    reader,
)
from duckflow.protocols.symops.validator import attach_hunks, check_action, plainly_valid

__all__ = ["EventKind", "StreamEvent", "StreamingProcessor"]


class StreamingProcessor(Scanner):
    """`feed(piece) -> events completed by it`, then `finish() -> SymOpsResult` (== parse)."""

    def __init__(self, *, request: str | None = None,
                 on_event: Callable[[StreamEvent], None] | None = None) -> None:  # fmt: skip
        super().__init__(emit=self._item)
        self.request = request
        self.on_event = on_event
        self.final: SymOpsResult | None = None
        self.tail_events: list[StreamEvent] = []  # items completed by finish() itself
        self.skip = 0
        self.check: list[int] = []  # actions the lean reader leaves to the final validation
        self._reader: Reader | None = reader(self)
        next(self._reader)
        # `feed` is the reader's own send while the lean reader reads (the method: the Scanner)
        self.__dict__["feed"] = self._reader.send

    @property
    def st(self) -> int:
        """0 while the lean reader reads, 3 once the full Scanner has taken over (or finished).

        Setting 3 hands over at once (tests use it to get the Scanner as a reference).
        """
        return 0 if self._reader is not None else 3

    @st.setter
    def st(self, value: int) -> None:
        if value != 3:
            raise ValueError("only 3 (hand over to the Scanner) can be set")
        if self._reader is not None:
            self._reader.throw(HandOver())

    def _item(self, kind: str, item: Any) -> None:
        if self.skip:  # replaying what the lean reader read: those items were emitted already
            self.skip -= 1
            return
        if kind == "action" and isinstance(item, Action):
            # the scanner's own object: validation later changes it the same way, and when the
            # stream is not strict the final result comes from a fresh parse
            if item.type == "edit":
                attach_hunks(item)
            if self.violations or (not plainly_valid(item) and check_action(item)):
                item.executable = False
        ev = StreamEvent((kind, item))
        self.events.append(ev)
        if self.on_event is not None:
            self.on_event(ev)

    def feed(self, piece: str) -> Sequence[StreamEvent]:
        """Add a piece; returns the items it completed. Raises after finish().

        (This is the Scanner path; while the lean reader reads, `feed` is its `send`.)
        """
        if not piece and not self.done:
            return ()  # an empty piece completes nothing (the Scanner would close a waiting action)
        return Scanner.feed(self, piece)

    def hand_over(self, emitted: int, before: list[StreamEvent]) -> list[StreamEvent]:
        """The Scanner takes over: replay everything fed once, without emitting items again.

        `emitted`: items the lean reader emitted in earlier pieces; `before`: items it
        completed in the current piece before it gave up. Returns the current piece's items.
        """
        if self.on_event is not None:
            for ev in before:
                self.on_event(ev)
        self._reader = None
        self.__dict__.pop("feed", None)
        self.skip = emitted + len(before)
        self.result = SymOpsResult()
        text = "".join(self.pieces)
        self.pieces = []
        self.events = []
        replayed = Scanner.feed(self, text) if text else ()
        return [*before, *replayed]

    def finish(self) -> SymOpsResult:
        """The final result for everything fed — equal to `parse(text)`."""
        lean = self._reader
        lean_read_all = False
        if self.final is None and lean is not None:
            last = lean.throw(Final())
            self.events = list(last)
            if self._reader is not None:  # the lean reader read everything
                self._reader = None
                self.__dict__.pop("feed", None)
                self.done = True
                self.mode = 4  # feed() after finish() raises, as the scanner's does
                lean_read_all = True
        if self.final is None:
            super().finish()
            self.tail_events, self.events = self.events, []
            if lean_read_all and not self.violations:
                # strict throughout (the lean reader hands over at any doubt). finish_strict
                # only asks whether the text is blank: the first non-blank piece answers that
                # without joining the whole text.
                first = next((p for p in self.pieces if p and not p.isspace()), "")
                # The final validation looks only at the actions in `check`: the others were
                # plainly valid when read (validation leaves them as they are) and their
                # blocks cannot be a markdown fence (which the final result would remove).
                acts = self.result.actions
                self.result.actions = [acts[i] for i in self.check]
                try:
                    self.final = finish_strict(self.result, first)
                finally:
                    self.result.actions = acts
            elif not self.violations:
                self.final = finish_strict(self.result, self.text)
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
