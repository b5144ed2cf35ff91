"""StreamingProcessor (seed 000 §5.2): reads a reply as it arrives and emits each item once complete.

Feed it pieces of any size (down to one character). A thought is emitted when its line ends,
a question when its options end, an action when its block closes (or, with no block, as soon
as the next line begins with anything but a fence). The work is linear in the input: every
line is looked at once, and text inside an open block is only checked for its closing fence.

`finish()` returns exactly what `parse()` returns for the whole text: when the stream was
strict Sym-Ops the scanner's own result is used; otherwise the whole text goes through the
repair pipeline once. Items emitted along the way are previews: an action is marked
`executable` only while the stream is still strict, and the final result decides.

Speed: while the stream is plainly canonical (the lines `fastscan.fast_strict` accepts) a
lean path runs. A piece without a newline is only appended to a list; inside a block, a
piece is looked at only when it may start the closing fence (`\n-` in it, or a `-` right
after a newline), and the block text is searched once, when such a line has ended. At the
first line the lean path is not sure of, everything fed so far is replayed once through the
full `Scanner` (the items already emitted are not emitted again) and the Scanner goes on.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable, Sequence
from typing import Any, Literal

from duckflow.protocols.symops.model import (
    CONTENT_OPTIONAL,
    SYNONYMS,
    Action,
    Note,
    SymOpsResult,
    normalize_verb,
)
from duckflow.protocols.symops.processor import finish_strict, process_repaired
from duckflow.protocols.symops.scanner import (
    _FILE_TYPES,
    _SPACE_DECOR,
    Scanner,
    _maybe_annotated,
    parse_vitals,
)
from duckflow.protocols.symops.validator import attach_hunks, check_action, plainly_valid

EventKind = Literal["thought", "vitals", "action", "question", "error"]


_PLAIN_TYPES = frozenset({"create", "delete", "run", "test"})


class _Unsure(Exception):
    """The lean path met a line it is not sure of: the Scanner takes over."""


class StreamEvent(tuple[str, Any]):
    """One complete item: `kind` and the item (str, dict, Action, Question or Note).

    A plain tuple underneath (built at C speed: streams emit many of these).
    """

    __slots__ = ()

    @property
    def kind(self) -> EventKind:
        return self[0]  # type: ignore[return-value]

    @property
    def item(self) -> Any:
        return self[1]


class StreamingProcessor(Scanner):
    """`feed(piece) -> events completed by it`, then `finish() -> SymOpsResult` (== parse)."""

    def __init__(self, *, request: str | None = None,
                 on_event: Callable[[StreamEvent], None] | None = None) -> None:  # fmt: skip
        super().__init__(emit=self._item)
        self.request = request
        self.on_event = on_event
        self.final: SymOpsResult | None = None
        self.tail_events: list[StreamEvent] = []  # items completed by finish() itself
        # the lean path's state (see the module docstring); `slow`: the Scanner has taken over
        self.st = 0  # lean path: 0 outside blocks, 1 in a block, 2 in a block with a fence begun;
        # 3: the Scanner has taken over
        self.emitted = 0  # items the lean path emitted (a replay skips as many)
        self.skip = 0
        self.f_rest = ""  # start of the line not complete yet (outside blocks)
        self.f_defer = 0  # lines that ended but wait to be read (see _f_defer)
        self.f_tail = ""  # what followed the waiting action line's newline in its piece
        self.f_mark = 0  # the first piece after the one that ended the waiting action line
        self.f_from = 0  # pieces[f_from:] are not read yet
        self.f_line = 0  # lines read
        self.f_act: Action | None = None  # an action whose next line has not begun yet
        self.f_fence = 0  # length of the last fence (the scanner stamps it on every action)
        self.f_needle = ""  # newline + the open block's fence
        self.f_chunks: list[str] = []  # the open block's text, searched already
        self.f_win = ""  # the open block's text still to search (then pieces[f_from:])

    def _item(self, kind: str, item: Any) -> None:
        if self.skip:  # replaying what the lean path read: those items were emitted already
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

    # -- the lean path ------------------------------------------------------------------------
    def feed(self, piece: str) -> Sequence[StreamEvent]:
        """Add a piece; returns the items it completed. Raises after finish()."""
        st = self.st
        if st == 1:  # in a block (most pieces): only a piece that may begin the fence is read
            if "-" not in piece or ("\n-" not in piece and piece[0] != "-"):
                self.pieces.append(piece)
                return ()
            pieces = self.pieces
            if piece[0] == "-" and self._after_piece(len(pieces)):
                at = 0  # where the first line that may be the closing fence starts
            else:
                at = piece.find("\n-") + 1
                if not at:
                    pieces.append(piece)
                    return ()  # a `-` that does not start a line
            pieces.append(piece)
            if piece.find("\n", at) < 0:
                self.st = 2  # a fence may have begun: read at the end of its line
                return ()
        elif st == 0:
            if not piece:
                return ()
            pieces = self.pieces
            pieces.append(piece)
            if "\n" not in piece:
                if piece[0] == "-" or (self.f_act is None and self.f_defer != 1) or not self._after_piece(len(pieces) - 1):
                    return ()
                # the line after an action began, and is no fence: the action is complete
            elif self.f_act is None and self._f_defer(piece):
                return ()
        elif st == 2:
            self.pieces.append(piece)
            if "\n" not in piece:
                return ()
        else:
            return Scanner.feed(self, piece)
        try:
            self._f_run(False)
        except _Unsure:
            self._fallback()
        if self.events:
            out, self.events = self.events, []
            return out
        return ()

    def _after_piece(self, end: int) -> bool:
        """The text of pieces[:end] ends with a newline (empty pieces skipped)."""
        pieces = self.pieces
        for k in range(end - 1, -1, -1):
            if pieces[k]:
                return pieces[k][-1] == "\n"
        return True

    def _f_defer(self, piece: str) -> bool:
        """True when reading can wait: this piece ends only an action line, or an action line
        and the fence opening its block (then the block's pieces are only watched for a
        closing fence, and the next read starts at the action line).

        `f_defer`: 0 nothing waits; 1 an action line waits (the next line begins with `-` or
        has not begun); 2 an action line and its opening fence wait, `st` is a block's.
        """
        k = piece.find("\n")
        if self.f_defer == 0:
            if (self.f_rest or self.pieces[self.f_from])[0] != "$":
                return False
            after = piece[k + 1 : k + 2]
            if after != "-":
                if after:
                    return False
                self.f_defer, self.f_tail, self.f_mark = 1, "", len(self.pieces)
                return True
            j = piece.find("\n", k + 1)
            if j < 0:
                self.f_defer, self.f_tail, self.f_mark = 1, piece[k + 1 :], len(self.pieces)
                return True
            fence, k = piece[k + 1 : j], j
        else:
            fence = self.f_tail + "".join(self.pieces[self.f_mark : -1]) + piece[:k]
        fence = fence.rstrip(" \t")
        if len(fence) < 2 or fence.count("-") != len(fence) or "\n-" in piece[k:]:
            return False  # not a fence, or a line that may close the block begins: read now
        self.f_defer, self.st = 2, 1
        return True

    def _fallback(self) -> None:
        """Hand over to the Scanner: replay everything once, without emitting items again."""
        self._f_emitted()  # what the lean path completed before it gave up
        self.st = 3
        self.skip = self.emitted
        self.result = SymOpsResult()
        text = "".join(self.pieces)
        self.pieces = []
        before = self.events
        self.events = []
        replayed = Scanner.feed(self, text)
        self.events = [*before, *replayed]

    def _f_emitted(self) -> None:
        """Count the items the lean path put in `events` and show them to `on_event`."""
        self.emitted += len(self.events)
        if self.on_event is not None:
            for ev in self.events:
                self.on_event(ev)

    def _f_action(self, act: Action) -> StreamEvent:
        act.fence = self.f_fence
        self.result.actions.append(act)
        typ, p = act.type, act.path
        # the common case needs no call: a subset of plainly_valid (edits get their hunks read)
        if not (p and typ in _PLAIN_TYPES and p[0] != "/" and ".." not in p
                and (act.content is not None or typ in CONTENT_OPTIONAL)):  # fmt: skip
            if typ == "edit":
                attach_hunks(act)
            if not plainly_valid(act) and check_action(act):
                act.executable = False
        return StreamEvent(("action", act))

    def _f_run(self, final: bool) -> None:
        """Read what the unread pieces completed: lines outside blocks, or the open block's end.

        `f_rest` + pieces[f_from:] is the unread text: outside a block it starts at the
        beginning of a line; inside one it is block text not searched yet (the searched part
        is in `f_chunks`). Raises `_Unsure` at a line the lean path does not handle.
        """
        pieces = self.pieces
        w = self.f_rest + "".join(pieces[self.f_from :])
        self.f_from = len(pieces)
        block = self.st != 0 and self.f_defer != 2  # 2: the waiting text starts at an action line
        self.f_defer = 0
        if final and w and w[-1] != "\n" and not block:
            w += "\n"  # the last line, as the scanner reads it at the end
        events = self.events
        res = self.result
        act = self.f_act
        line_no = self.f_line
        pos = 0
        bs = 0  # where the open block's text starts in w
        while True:
            if block:  # find the closing fence: newline + the fence + spaces/tabs + newline
                needle = self.f_needle
                flen = len(needle) - 1
                s = bs
                while True:
                    i = w.find(needle, s)
                    if i < 0:
                        if final:
                            raise _Unsure  # never closed: the scanner reports it
                        keep = max(bs, len(w) - flen)
                        j = w.rfind("\n", keep)  # a fence may be arriving in the next pieces
                        hot = j >= 0 and w.count("-", j + 1) == len(w) - j - 1
                        break
                    p = i + 1
                    eol = w.find("\n", p + flen)
                    if eol < 0:
                        if not final:
                            keep, hot = i, True  # wait for the end of that line
                            break
                        eol = len(w)
                    if p + flen == eol or not w[p + flen : eol].strip(" \t"):
                        keep = -1
                        break
                    s = p
                if keep >= 0:  # not closed yet
                    if keep > bs:
                        self.f_chunks.append(w[bs:keep])
                    self.f_rest, self.f_line, self.f_act = w[keep:], line_no, act
                    self.st = 2 if hot else 1
                    break
                chunks = self.f_chunks
                if chunks:
                    chunks.append(w[bs:i])
                    text = "".join(chunks)
                    self.f_chunks = []
                else:
                    text = w[bs:i]
                line_no += text.count("\n") + 1
                assert act is not None
                act.content = text[1:]
                events.append(self._f_action(act))
                act = None
                block = False
                pos = eol + 1
            nl = w.find("\n", pos)
            if nl < 0:
                rest = w[pos:]
                if act is not None and (final or (rest and rest[0] != "-")):
                    events.append(self._f_action(act))  # the next line began and is no fence
                    act = None
                self.f_rest, self.f_line, self.f_act = rest, line_no, act
                self.st = 0
                break
            line_no += 1
            c = w[pos]
            if act is not None:
                if c == "-" and w[pos + 1 : pos + 2] == "-":  # the action's block opens
                    fence = w[pos:nl].rstrip(" \t")
                    if fence.count("-") != len(fence):
                        raise _Unsure
                    self.f_fence, self.f_needle = len(fence), "\n" + fence
                    block, bs = True, nl
                    continue
                events.append(self._f_action(act))
                act = None
            if c == "~":
                t = w[pos + 1 : nl].strip()
                res.thoughts.append(t)
                events.append(StreamEvent(("thought", t)))
            elif c == "$":  # as fastscan.canonical_action, inline (one call less per action)
                k = w.find(" @ ", pos + 2, nl)
                if w[pos + 1 : pos + 2] != " " or k <= pos + 2:
                    raise _Unsure
                verb = w[pos + 2 : k]
                target = w[k + 3 : nl]
                typ = SYNONYMS.get(verb) or normalize_verb(verb)
                if not (" " not in verb and target and target[0] not in _SPACE_DECOR
                        and target[-1] not in _SPACE_DECOR and "\r" not in target
                        and (typ not in _FILE_TYPES or not _maybe_annotated(target))):  # fmt: skip
                    raise _Unsure
                dep = None
                if typ != "run" and ">" in target:
                    target, _, dep_s = target.partition(">")
                    target, dep = target.rstrip(" \t"), dep_s.strip(" \t") or None
                act = Action(typ, verb, target or None, None, dep)
                act.line = line_no
            elif nl != pos:
                line = w[pos:nl]
                if line.isspace():
                    pass
                elif c == "#" and line[-1] != "\r" and (vitals := parse_vitals(line.rstrip(" \t"))) is not None:
                    res.vitals.update(vitals)
                    events.append(StreamEvent(("vitals", vitals)))
                elif c == "!" and line[-1] != "\r":
                    kind, _, tgt = line[1:].partition("@")
                    note = Note(kind.strip(), tgt.strip() or None)
                    res.notes.append(note)
                    events.append(StreamEvent(("error", note)))
                else:
                    raise _Unsure  # a question, a stray block, prose...: the Scanner decides
            pos = nl + 1
        if events:
            self.emitted += len(events)
            if self.on_event is not None:
                for ev in events:
                    self.on_event(ev)

    def finish(self) -> SymOpsResult:
        """The final result for everything fed — equal to `parse(text)`."""
        if self.final is None and self.st != 3:
            try:
                self._f_run(True)
            except _Unsure:
                self._fallback()
            else:
                self.st = 3
                self.done = True
                self.mode = 4  # feed() after finish() raises, as the scanner's does
        if self.final is None:
            super().finish()
            self.tail_events, self.events = self.events, []
            text = self.text
            if not self.violations:
                self.final = finish_strict(self.result, text)
            else:
                self.final = process_repaired(text, self.request)
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
