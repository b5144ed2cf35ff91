"""The strict Sym-Ops reader: a resumable, linear scanner used one-shot and for streaming.

Grammar (see docs/protocols/symops.md): a reply is lines. Outside a block a line is blank, a
thought `~ text`, vitals `#c0.9 #m0.8`, an action `$ verb @ target [> dependency]`, a
question `? text` followed by numbered options, or a model error `! Kind [@ target]`.
A content block opens on the line right after an action with a fence of two or more dashes
and closes at the first line that is the same fence (trailing spaces and tabs allowed);
everything in between is content, byte for byte. Anything else is a *violation*: the scanner
records it (the first 64) and keeps going, so that streaming can still show what it found; a
result with violations is never final (the repair pipeline reads the whole text), so lines
that are not protocol are not collected here.

This is the one reader of the grammar: `parse` uses it one-shot (stopping at the first
violation), `StreamingProcessor` feeds it pieces. Work is linear in the input.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from duckflow.protocols.symops.lines import _clean_target
from duckflow.protocols.symops.model import (
    SYNONYMS,
    VITAL_KEYS,
    Action,
    Issue,
    Note,
    Question,
    SymOpsResult,
    normalize_verb,
)

_ACTION = re.compile(r"\$[ \t]*([^\s@]+)[ \t]*@[ \t]*(.*?)[ \t]*$")
_VITAL = re.compile(r"#([cmfs])[ \t]*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)[ \t]*")
_ACTION_AT = re.compile(r"\$[ \t]*[^\s@]+[ \t]*@")  # an option that is really an action line
_OPTION = re.compile(r"[ \t]*(\d+)[.)][ \t]+(.*?)[ \t]*$")
_DECORATED = ("`", "*", '"', "'", "“", "”", "「", "」", "『", "』", "«", "»")
_SPACE_DECOR = frozenset(" \t`*\"'“「『«")
_FILE_TYPES = frozenset({"create", "edit", "delete", "test"})


def _maybe_annotated(target: str) -> bool:
    """`a.py (new file)`, `a.py # main`, `a.py - the entry point`: a remark after the path."""
    return (" (" in target or " #" in target or " - " in target or " -- " in target or " —" in target
            or (target[-1] in ".。" and target[-2:-1] not in ("", ".", "/")))  # fmt: skip

Emit = Callable[[str, Any], None]
MAX_VIOLATIONS = 64  # kept for display; a stream of prose must not keep one Issue per line


def parse_action_line(line: str) -> Action | None:
    """`$ verb @ target > dep` -> Action (declared, executable until checked), or None."""
    m = _ACTION.match(line)
    if m is None:
        return None
    verb, target = m.group(1), m.group(2)
    typ = normalize_verb(verb)
    dep: str | None = None
    if typ != "run" and ">" in target:
        target, _, dep_s = target.partition(">")
        target, dep = target.rstrip(" \t"), dep_s.strip(" \t") or None
    return Action(type=typ, verb=verb, path=target or None, depends_on=dep)


def parse_vitals(line: str) -> dict[str, float] | None:
    """`#c0.9 #m0.8` -> {"confidence": 0.9, "mood": 0.8}; None when the line is not only vitals."""
    out: dict[str, float] = {}
    pos, n = 0, len(line)
    while pos < n:
        m = _VITAL.match(line, pos)
        if m is None:
            return None
        out[VITAL_KEYS[m.group(1)]] = float(m.group(2))
        pos = m.end()
    return out or None


def unquote(text: str) -> str:
    """Strip one pair of surrounding double quotes."""
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        return text[1:-1]
    return text


def is_dash_fence(line: str) -> bool:
    s = line.rstrip(" \t")
    return len(s) >= 2 and s.count("-") == len(s)


class _NotStrict(Exception):
    """Raised by a scanner with `stop_early` at its first violation."""


class Scanner:
    """Reads Sym-Ops incrementally. `feed()` pieces, then `finish()`; `violations` lists every
    departure from the strict grammar (empty: the text was strict Sym-Ops).

    Each line is examined once, and a block's closing fence is searched with `str.find` from
    where the last search stopped, so the total work is linear in the input.
    """

    OUT, PENDING, BLOCK, QUESTION = 0, 1, 2, 3

    def __init__(self, emit: Emit | None = None, *, stop_early: bool = False) -> None:
        self.stop_early = stop_early  # one-shot strict check: stop at the first violation
        self.buf = ""
        self.pos = 0
        self.line_no = 0  # lines fully consumed
        self.mode = self.OUT
        self.result = SymOpsResult()
        self.violations: list[Issue] = []
        self.emit = emit
        self.action: Action | None = None
        self.question: Question | None = None
        self.fence = ""
        self.block_start = 0
        self.search = 0
        self.done = False
        self.pieces: list[str] = []  # everything fed, for `text`
        self.wait_from = 0  # pieces[wait_from:] are not read yet
        self.chunks: list[str] = []  # content of the open block already searched
        self.chunk_lines = 0
        self.events: list[Any] = []  # filled by subclasses that collect items (streaming)
        self.needle = "\n--"  # newline + the open block's fence
        self.tail_cut = -2
        self.hot = False  # in a block: a fence candidate waits for the end of its line
        self.packed = 0  # pieces[:packed] are already packed into larger strings
        self.want_prose = False  # also emit ("prose", line) for lines that are not protocol

    @property
    def text(self) -> str:
        """Everything fed so far."""
        return "".join(self.pieces)

    # -- input -------------------------------------------------------------------------------
    def feed(self, piece: str) -> Sequence[Any]:
        """Add text; returns what subclasses collected in `events` meanwhile (else empty).

        Pieces are kept in `pieces`; those not read yet are `pieces[wait_from:]`. A piece with
        no newline completes nothing, and inside a block only a piece that may hold the
        closing fence (it has a newline or starts with a dash) is looked at.
        """
        if not piece:
            if self.mode == 4:
                raise RuntimeError("feed() after finish()")
            return ()  # an empty piece completes nothing (it must not close a waiting action)
        pieces = self.pieces
        pieces.append(piece)
        if len(pieces) - self.packed > 4096:
            self._pack()
        mode = self.mode
        if mode == 2:  # BLOCK
            if not self.hot:
                if "\n" not in piece and piece[:1] != "-":
                    return ()
                k = self.tail_cut  # -len(fence)
                prev = pieces[-2] if len(pieces) > 1 else ""
                if len(prev) < -k:
                    prev = "".join(pieces[k - 1 : -1])
                if self.needle not in prev[k:] + piece:
                    return ()
                self.hot = True
            if "\n" not in piece:
                return ()
        elif "\n" not in piece:
            if mode == 4:
                raise RuntimeError("feed() after finish()")
            if mode == 1 and piece[:1] != "-" and self.wait_from == len(pieces) - 1 and self.pos >= len(self.buf):
                self._close_action(None)  # the line after an action began, and is no fence
                if self.events:
                    out, self.events = self.events, []
                    return out
            return ()
        elif mode == 4:
            raise RuntimeError("feed() after finish()")
        w = self.wait_from
        n = len(pieces)
        new = piece if w == n - 1 else "".join(pieces[w:])
        if self.mode != 2 and self.pos >= len(self.buf):
            self.buf, self.pos = new, 0  # all read: start afresh instead of copying
        else:
            self.buf = self.buf + new
        self.wait_from = n
        self._run(final=False)
        if self.mode != 2:
            if self.pos > 512:  # drop what was read, now and then (amortised)
                self.buf = self.buf[self.pos :]
                self.pos = 0
            if self.mode == 1 and self.pos < len(self.buf) and self.buf[self.pos] != "-":
                self._close_action(None)  # the next line has begun and is no fence
        else:
            self.hot = self.buf.find(self.needle, self.search) >= 0
        if self.events:
            out, self.events = self.events, []
            return out
        return ()

    def _pack(self) -> None:
        """Join the pieces fed since the last packing into one string (two around `wait_from`).

        A stream in 16-byte pieces would otherwise hold one string object per piece (~4x the
        text); the last 8 pieces stay apart (the fence check looks back at them).
        """
        pieces, a, b, w = self.pieces, self.packed, len(self.pieces) - 8, self.wait_from
        cuts = [a, w, b] if a < w < b else [a, b]
        packed = ["".join(pieces[x:y]) for x, y in zip(cuts, cuts[1:], strict=False)]
        pieces[a:b] = packed
        if w >= b:
            self.wait_from = w - (b - a) + len(packed)
        elif a < w:
            self.wait_from = a + 1
        self.packed = a + len(packed)

    def finish(self) -> SymOpsResult:
        if not self.done:
            if self.wait_from < len(self.pieces):
                self.buf = self.buf + "".join(self.pieces[self.wait_from :])
                self.wait_from = len(self.pieces)
            self._run(final=True)
            if self.mode == self.BLOCK:
                self._unclosed()
            elif self.mode == self.PENDING:
                self._close_action(None)
            elif self.mode == self.QUESTION:
                self._close_question()
            self.done = True
            self.mode = 4  # DONE
        return self.result

    # -- core --------------------------------------------------------------------------------
    def _run(self, final: bool) -> None:
        buf = self.buf
        n = len(buf)
        pos = self.pos
        line_no = self.line_no
        while True:
            mode = self.mode
            if mode == 2:  # BLOCK
                self.pos, self.line_no = pos, line_no
                if not self._scan_block(final):
                    return
                pos, line_no = self.pos, self.line_no
                continue
            nl = buf.find("\n", pos)
            if nl < 0:
                if not final or pos >= n:
                    self.pos, self.line_no = pos, line_no
                    return
                nl = n
            line = buf[pos:nl]
            pos = nl + 1
            line_no += 1
            if mode == 1:  # PENDING
                if line[:2] == "--" and is_dash_fence(line):
                    self.fence = fence = line.rstrip(" \t")
                    self.needle, self.tail_cut = "\n" + fence, -len(fence)
                    self.mode = 2
                    self.block_start = self.search = pos - 1
                    continue
                self._close_action(None)
                mode = 0
            if mode == 0:  # OUT: fast paths for the common canonical lines
                c = line[:1]
                if c == "~":
                    text = line[1:].strip()
                    self.result.thoughts.append(text)
                    if self.emit is not None:
                        self.emit("thought", text)
                    continue
                if c == "$" and line[1:2] == " ":
                    k = line.find(" @ ", 2)
                    if k > 2:
                        verb = line[2:k]
                        target = line[k + 3 :]
                        typ = SYNONYMS.get(verb) or normalize_verb(verb)
                        if (" " not in verb and target and target[0] not in _SPACE_DECOR
                                and target[-1] not in _SPACE_DECOR and "\r" not in target
                                and (typ not in _FILE_TYPES or not _maybe_annotated(target))):  # fmt: skip
                            dep = None
                            if typ != "run" and ">" in target:
                                target, _, dep_s = target.partition(">")
                                target, dep = target.rstrip(" \t"), dep_s.strip(" \t") or None
                            act = Action(typ, verb, target or None, None, dep)
                            act.line = line_no
                            self.action = act
                            self.mode = 1
                            continue
                elif not line:
                    continue
            self.pos, self.line_no = pos, line_no
            self._line(line)

    def _scan_block(self, final: bool) -> bool:
        """Look for the closing fence; True when found (block closed), False to wait for input.

        The block's region starts at the newline ending the opening fence, so an empty block is
        found like any other; text searched without success moves to `chunks`.
        """
        buf, fence = self.buf, self.fence
        needle = "\n" + fence
        flen = len(fence)
        s = self.search
        bs = self.block_start
        while True:
            i = buf.find(needle, s)
            if i < 0:
                if not final:
                    self._shelve(max(bs, len(buf) - len(needle) + 1))
                return False
            p = i + 1
            eol = buf.find("\n", p + flen)
            if eol < 0:
                if not final:
                    self._shelve(i)
                    return False
                eol = len(buf)
            rest = buf[p + flen : eol]
            if not rest or not rest.strip(" \t"):
                if self.chunks:
                    content = ("".join(self.chunks) + buf[bs:i])[1:]
                else:
                    content = buf[bs + 1 : i] if i > bs else ""
                self.line_no += self.chunk_lines + buf.count("\n", bs, p)
                self.chunks, self.chunk_lines = [], 0
                self.pos = eol + 1
                self.mode = self.OUT
                self._close_action(content)
                return True
            s = i + 1

    def _shelve(self, keep: int) -> None:
        """Move the searched part of an open block out of the window (keeps streaming linear)."""
        bs = self.block_start
        if keep > bs:
            part = self.buf[bs:keep]
            self.chunks.append(part)
            self.chunk_lines += part.count("\n")
            self.buf = self.buf[keep:]
            self.block_start = 0
            self.pos = 0
            self.search = 0

    def _unclosed(self) -> None:
        content = ("".join(self.chunks) + self.buf[self.block_start :])[1:]
        self.chunks = []
        line = self.action.line if self.action else self.line_no
        self.line_no += content.count("\n") + (1 if content else 0)
        self._violation("unclosed_block", line, "the content block is never closed",
                        f"a line `{self.fence}` after the content")  # fmt: skip
        if content.endswith("\n"):
            content = content[:-1]
        self.mode = self.OUT
        self._close_action(content, closed=False)

    def _violation(self, kind: str, line: int, message: str, expected: str = "") -> None:
        if len(self.violations) < MAX_VIOLATIONS:  # (any one sends the text to the repair pipeline)
            self.violations.append(Issue(kind, line, message, expected))
        if self.stop_early:
            raise _NotStrict

    def _line(self, line: str) -> None:
        mode = self.mode
        if mode == self.PENDING:
            if is_dash_fence(line) and line[0] == "-":
                self.fence = line.rstrip(" \t")
                self.needle, self.tail_cut = "\n" + self.fence, -len(self.fence)
                self.mode = self.BLOCK
                self.block_start = self.search = self.pos - 1
                return
            self._close_action(None)
        elif mode == self.QUESTION:
            m = _OPTION.match(line)
            if m is not None and self.question is not None and not _ACTION_AT.match(m.group(2)):
                self.question.options.append(m.group(2))
                return
            self._close_question()
        if not line or line.isspace():
            return
        if line[-1] == "\r":
            self._violation("crlf", self.line_no, "line ends with a carriage return")
            line = line.rstrip("\r")
            if not line:
                return
        c = line[0]
        res = self.result
        if c == "~":
            text = line[1:].strip()
            res.thoughts.append(text)
            if self.emit:
                self.emit("thought", text)
        elif c == "$":
            act = parse_action_line(line)
            if act is None:
                self._violation("bad_action_line", self.line_no, f"cannot read action `{line[:60]}`",
                                "`$ verb @ target`")  # fmt: skip
                return
            if act.path and act.type in _FILE_TYPES and _maybe_annotated(act.path):
                self._violation("annotated_target", self.line_no, f"`{act.path}` has a remark after the path",
                                "only the path after `@`")  # fmt: skip
            if (act.path and (act.path[0] in _DECORATED or act.path[-1] in _DECORATED)
                    and _clean_target(act.path)[1]):  # `echo 'x'` ends with its own quote  # fmt: skip
                self._violation("decorated_target", self.line_no, f"target `{act.path}` is quoted",
                                "a bare path or command after `@`")  # fmt: skip
            act.line = self.line_no
            self.action = act
            self.mode = self.PENDING
        elif c == "#":
            vitals = parse_vitals(line.rstrip(" \t"))
            if vitals is None:
                self._violation("bad_vitals", self.line_no, f"`{line[:40]}` is not a vitals line",
                                "`#c0.9 #m0.8 #f0.9 #s0.7`")  # fmt: skip
                return
            res.vitals.update(vitals)
            if self.emit:
                self.emit("vitals", vitals)
        elif c == "?":
            self.question = Question(unquote(line[1:].strip()))
            self.mode = self.QUESTION
        elif c == "!":
            kind, _, target = line[1:].partition("@")
            note = Note(kind.strip(), target.strip() or None)
            res.notes.append(note)
            if self.emit:
                self.emit("error", note)
        elif c == "-" and is_dash_fence(line):
            self._violation("stray_block", self.line_no, "a content block with no action before it",
                            "`$ verb @ target` on the line before `--`")  # fmt: skip
            self.fence = line.rstrip(" \t")
            self.needle, self.tail_cut = "\n" + self.fence, -len(self.fence)
            self.action = None
            self.mode = self.BLOCK
            self.block_start = self.search = self.pos - 1
        else:
            self._violation("prose", self.line_no, f"`{line[:60]}` is not a Sym-Ops line",
                            "a line starting with ~ $ # ? ! or a block")  # fmt: skip
            if self.want_prose and self.emit:
                self.emit("prose", line)

    def _close_action(self, content: str | None, closed: bool = True) -> None:
        act = self.action
        self.action = None
        self.mode = self.OUT
        if act is None:  # a stray block's content (a violation: the repair pipeline reads it)
            return
        act.content = content
        act.fence = len(self.fence)
        if not closed:
            act.executable = False
            act.guess = "truncated_block"
        self.result.actions.append(act)
        if self.emit:
            self.emit("action", act)

    def _close_question(self) -> None:
        q = self.question
        self.question = None
        self.mode = self.OUT
        if q is not None:
            self.result.questions.append(q)
            if self.emit:
                self.emit("question", q)


def strict_scan(text: str, *, stop_early: bool = False) -> Scanner:
    """Scan a whole text; the scanner holds the result and its violations.

    With `stop_early`, scanning ends at the first violation (the result is then partial).
    """
    sc = Scanner(stop_early=stop_early)
    try:
        sc.feed(text)
        sc.finish()
    except _NotStrict:
        pass
    return sc
