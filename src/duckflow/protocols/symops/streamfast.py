"""The lean streaming reader: canonical Sym-Ops read piece by piece by one resumable generator.

`StreamingProcessor` binds `feed` to `reader(...).send`, so a piece costs one generator resume
and no attribute look-ups: all state lives in the generator's local variables.

- Outside blocks, a piece with no newline is only appended (and, when an action waits for
  its next line to begin, its first character is looked at). A piece with a newline reads
  every line completed since the last read, in one batch, with the tight logic of
  `fastscan.fast_strict`.
- Inside a block, a piece is looked at only when a line in it may start with `-`
  (`-` not in the piece settles most pieces). The candidate line is checked alone, even when
  it spans several pieces; content is never rescanned. When the closing fence line ends, the
  block text is joined once.
- At the first line it is not sure of, the reader calls `host.hand_over(...)`: the full
  `Scanner` replays everything fed and goes on (see streaming.py). Items are emitted at the
  same piece as the Scanner emits them; a test compares both on random texts.

Cost (1 MB canonical reply in 16-byte pieces, `duckflow bench protocols`): stream/one-shot
about 1.75-1.85 (21 interleaved runs, gc off; was 2.05-2.15 before the final validation was
limited to `check` and the start of a line grew as one string). One piece is about 1.05: what
is left is one generator resume per piece (~10 ms of ~50), roughly 0.5-1 us per batch (a
piece that completes a line) and the items' events. `finish()` validates only the actions
whose index `_ready` put in `check` (none in the bench reply).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import Any, Literal, Protocol

from duckflow.protocols.symops.model import (
    CONTENT_OPTIONAL,
    SYNONYMS,
    Action,
    Note,
    SymOpsResult,
    normalize_verb,
)
from duckflow.protocols.symops.scanner import (
    _FILE_TYPES,
    _SPACE_DECOR,
    _maybe_annotated,
    parse_vitals,
)
from duckflow.protocols.symops.validator import attach_hunks, check_action, plainly_valid

EventKind = Literal["thought", "vitals", "action", "question", "error"]
_PLAIN_TYPES = frozenset({"create", "delete", "run", "test"})


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


class Final(Exception):
    """Thrown into the reader by `finish()`: what is left is the end of the text."""


class HandOver(Exception):
    """Thrown into the reader to hand over to the Scanner at once."""


class _Unsure(Exception):
    """A line the reader does not handle: the Scanner takes over."""


class Host(Protocol):
    """What the reader needs from its StreamingProcessor."""

    pieces: list[str]
    result: SymOpsResult
    on_event: Callable[[StreamEvent], None] | None
    check: list[int]  # indices of the actions the final validation must look at

    def hand_over(self, emitted: int, before: list[StreamEvent]) -> list[StreamEvent]: ...


Reader = Generator[Sequence[StreamEvent], str, None]


def _maybe_fence(cand: str, fence: str) -> bool:
    """`cand` (a line begun, not ended) may still become the closing `fence` line."""
    c = cand.rstrip(" \t")
    return c == fence or (len(c) == len(cand) and fence.startswith(c))


def _at_line_start(pieces: list[str], bfrom: int, bhead: str) -> bool:
    """The block text before the last piece ends with a newline (empty pieces skipped)."""
    for k in range(len(pieces) - 2, bfrom - 1, -1):
        p = pieces[k]
        if p:
            return p[-1] == "\n"
    return not bhead or bhead[-1] == "\n"


def _ready(act: Action, fence: int, actions: list[Action], check: list[int]) -> StreamEvent:
    """Record a complete action and preview whether it may run (the final result decides).

    An action not plainly valid, or whose block may be one markdown fence (which the final
    result removes), has its index put in `check`: the final validation looks at those only.
    """
    act.fence = fence
    actions.append(act)
    typ, p, c = act.type, act.path, act.content
    # the common cases need no call to plainly_valid (these tests are a subset of it)
    if typ == "edit":
        attach_hunks(act)  # the hunks are shown with the item
        if (p and p[0] != "/" and ".." not in p and c is not None and act.guess is None
                and (act.hunks is not None or "\n@@" not in c)):  # fmt: skip
            if c[:3] == "```":
                check.append(len(actions) - 1)
            return StreamEvent(("action", act))
    elif (
        p
        and typ in _PLAIN_TYPES
        and p[0] != "/"
        and ".." not in p
        and (c is not None or typ in CONTENT_OPTIONAL)
    ):
        if c is not None and c[:3] == "```":
            check.append(len(actions) - 1)
        return StreamEvent(("action", act))
    check.append(len(actions) - 1)
    if not plainly_valid(act) and check_action(act):
        act.executable = False
    return StreamEvent(("action", act))


def reader(host: Host) -> Reader:  # noqa: C901 - one loop on purpose: locals are the speed
    """The generator behind `feed`: send a piece, get the items it completed.

    Throw `Final` in to read the rest as the end of the text: it then yields the last items.
    Throw `HandOver` in to hand over to the Scanner at once.
    """
    pieces = host.pieces
    app = pieces.append
    res = host.result
    thoughts = res.thoughts
    actions = res.actions
    check = host.check
    empty: tuple[StreamEvent, ...] = ()
    out: Sequence[StreamEvent] = empty
    evs: list[StreamEvent] = []  # items completed by the current piece
    nvitals = 0  # vitals items emitted (the others are counted by the result's lists)
    st = 0  # 0: outside blocks; 1: in a block; 2: in a block, a line that may close it begun
    rest = ""  # outside blocks: the start of a line not complete yet (every piece since)
    act: Action | None = None  # an action whose next line has not been read
    waiting = False  # an action line ended, and the next line has not begun
    line_no = 0
    last_fence = 0  # the scanner stamps every action with the length of the last fence read
    fence = needle = ""
    flen = 0
    bhead = ""  # the open block's text (from its first line) before pieces[bfrom:]
    bfrom = 0
    cand = ""  # st 2: the block's last line so far, which may become the closing fence
    final = False
    while True:
        try:
            try:
                piece = yield out
                out = empty
                app(piece)
                if st == 0:
                    while "\n" not in piece:  # (a tight loop: most pieces end here)
                        if waiting and piece:
                            waiting = False
                            if piece[0] != "-":
                                break  # the next line began and is no fence: the action is complete
                        rest += piece  # (usually grown in place: no piece list to join later)
                        piece = yield empty
                        app(piece)
                    w = rest + piece
                else:
                    if st == 1:
                        while "-" not in piece or ("\n-" not in piece and piece[0] != "-"):
                            piece = yield empty  # no line in the piece may start with `-`
                            app(piece)
                        if piece[0] != "-":
                            s = piece
                        elif len(pieces) - 2 >= bfrom and pieces[-2]:  # the common case, inline
                            s = "\n" + piece if pieces[-2][-1] == "\n" else piece
                        else:
                            s = "\n" + piece if _at_line_start(pieces, bfrom, bhead) else piece
                    elif "\n" not in piece:
                        cand += piece
                        if not _maybe_fence(cand, fence):
                            st = 1
                        continue
                    else:
                        s = "\n" + cand + piece
                    # a line in `s` after a newline may be the closing fence
                    eol = -1
                    i = s.find(needle)
                    while i >= 0:
                        eol = s.find("\n", i + 1 + flen)
                        if eol < 0 or eol == i + 1 + flen or not s[i + 1 + flen : eol].strip(" \t"):
                            break
                        i = s.find(needle, i + 1)
                    if i < 0 or eol < 0:  # not closed: is a line that may close it begun?
                        j = s.rfind("\n")
                        cand = s[j + 1 :] if j >= 0 else ""
                        st = 2 if cand[:1] == "-" and _maybe_fence(cand, fence) else 1
                        continue
                    # closed: the block's text is t[:start] (the closing fence line starts there)
                    t = bhead + "".join(pieces[bfrom:])
                    start = len(t) - (len(s) - i - 1)
                    act.content = t[: start - 1] if start else ""  # type: ignore[union-attr]
                    line_no += 1 + t.count("\n", 0, start)
                    evs.append(_ready(act, last_fence, actions, check))  # type: ignore[arg-type]
                    act = None
                    st = 0
                    w = s[eol + 1 :]
            except Final:
                final, out = True, empty
                if st == 0:
                    w = rest
                    if w and w[-1] != "\n":
                        w += "\n"  # the last line, as the scanner reads it at the end
                else:
                    if st == 1 or cand.rstrip(" \t") != fence:
                        raise _Unsure from None  # never closed: the scanner reports it
                    t = bhead + "".join(pieces[bfrom:])  # closed by the last line
                    start = len(t) - len(cand)
                    assert act is not None
                    act.content = t[: start - 1] if start else ""
                    line_no += 1 + t.count("\n", 0, start)
                    evs.append(_ready(act, last_fence, actions, check))
                    act = None
                    st = 0
                    w = ""
            except HandOver:
                raise _Unsure from None
            # outside blocks: read the lines of `w` (it starts at the beginning of a line)
            waiting = False
            pos = 0
            while True:
                nl = w.find("\n", pos)
                if nl < 0:
                    break
                line_no += 1
                c = w[pos]
                if act is not None:
                    if c == "-" and w[pos + 1 : pos + 2] == "-":  # the action's block opens
                        f = w[pos:nl].rstrip(" \t")
                        if f.count("-") != len(f):
                            raise _Unsure
                        if f != fence:  # (most blocks use the same fence as the one before)
                            fence, flen, needle = f, len(f), "\n" + f
                        last_fence = flen
                        eol = -1
                        i = w.find(needle, nl)
                        while i >= 0:
                            eol = w.find("\n", i + 1 + flen)
                            if (eol < 0 or eol == i + 1 + flen
                                    or not w[i + 1 + flen : eol].strip(" \t")):  # fmt: skip
                                break
                            i = w.find(needle, i + 1)
                        if i >= 0 and eol >= 0:  # closed within `w`
                            act.content = w[nl + 1 : i] if i > nl else ""
                            line_no += w.count("\n", nl, i + 1)
                            evs.append(_ready(act, last_fence, actions, check))
                            act = None
                            pos = eol + 1
                            continue
                        if final:
                            raise _Unsure  # never closed: the scanner reports it
                        bhead, bfrom = w[nl + 1 :], len(pieces)
                        j = w.rfind("\n") + 1
                        st = 1  # (a line that may close the block begun: st 2)
                        if w[j : j + 1] == "-" and _maybe_fence(w[j:], fence):
                            st, cand = 2, w[j:]
                        break
                    evs.append(_ready(act, last_fence, actions, check))
                    act = None
                if c == "~":
                    t = w[pos + 1 : nl].strip()
                    thoughts.append(t)
                    evs.append(StreamEvent(("thought", t)))
                elif c == "$":  # as fastscan.fast_strict reads an action line
                    k = w.find(" @ ", pos + 2, nl)
                    if w[pos + 1 : pos + 2] != " " or k <= pos + 2:
                        raise _Unsure
                    verb = w[pos + 2 : k]
                    target = w[k + 3 : nl]
                    typ = SYNONYMS.get(verb) or normalize_verb(verb)
                    if not (" " not in verb and target and target[0] not in _SPACE_DECOR
                            and target[-1] not in _SPACE_DECOR and "\r" not in target
                            and (typ not in _FILE_TYPES or (" " not in target and target[-1] not in ".。")
                                 or not _maybe_annotated(target))):  # fmt: skip
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
                    elif (
                        c == "#"
                        and line[-1] != "\r"
                        and (vitals := parse_vitals(line.rstrip(" \t"))) is not None
                    ):
                        res.vitals.update(vitals)
                        nvitals += 1
                        evs.append(StreamEvent(("vitals", vitals)))
                    elif c == "!" and line[-1] != "\r":
                        kind, _, tgt = line[1:].partition("@")
                        note = Note(kind.strip(), tgt.strip() or None)
                        res.notes.append(note)
                        evs.append(StreamEvent(("error", note)))
                    else:
                        raise _Unsure  # a question, a stray block, prose...: the Scanner decides
                pos = nl + 1
            if st == 0:
                rest = w[pos:]
                if act is not None:
                    if final or (rest and rest[0] != "-"):
                        evs.append(
                            _ready(act, last_fence, actions, check)
                        )  # the next line began: no fence
                        act = None
                    elif not rest:
                        waiting = True
        except _Unsure:
            emitted = len(thoughts) + len(actions) + len(res.notes) + nvitals - len(evs)
            out = host.hand_over(emitted, evs)
            while True:  # the Scanner has taken over: this reader is not used again
                yield out
        if evs:
            if host.on_event is not None:
                for ev in evs:
                    host.on_event(ev)
            out, evs = evs, []
        if final:
            yield out
            return
