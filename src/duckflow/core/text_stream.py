"""Reads a text-codec reply once, linearly, while it streams: visible text out, actions noted.

A codec that can read a reply piece by piece (`codec.stream_reader(specs)`, Sym-Ops) is fed
every piece: each thought or prose line is shown when it ends, each action is reported the
moment its block closes (`on_action`), and the decoded reply at the end comes from the same
reading (`decode`), not from a second parse. Any other codec (DML, a user's own) is read line
by line: each newly completed run of lines is decoded alone (never the whole reply again) and
shown while it is plain text; from the first line that is not, nothing more streams and the
reply is decoded once at the end. Either way the work is linear in the reply. `ProtocolLines`
reads a reply so and passes its protocol text on line by line as it is written (the companion's
two-call step: what a person's channel reads to show a file's lines as they come).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from duckflow.core.chunks import NoticeChunk, NoticeData
from duckflow.llm.types import ToolSpec
from duckflow.protocols.codec import Codec, Decoded


class StreamReader(Protocol):
    """What a codec's `stream_reader(specs)` returns."""

    def bind(self, show: Callable[[str], None], action: Callable[[Any], None]) -> Callable[[str], Any]:
        """Route each completed line to `show` and each action to `action`; returns the `feed`
        to call once per piece (keep it one cheap call: it runs for every piece)."""
        ...

    def decoded(self, text: str) -> Decoded:
        """The whole reply decoded, from this reading (`text` is everything fed)."""
        ...


class FreeTextStreamer:
    """`feed(piece)` while the model writes; `decode(text)` once it is done; `rest(visible)`."""

    def __init__(self, codec: Codec, specs: Sequence[ToolSpec], emit: Callable[[str], None],
                 on_action: Callable[[Any], None] | None = None) -> None:  # fmt: skip
        self.codec = codec
        self.specs = specs
        self.emit = emit
        self.on_action = on_action
        make = getattr(codec, "stream_reader", None)
        self.reader: StreamReader | None = make(specs) if callable(make) else None
        if self.reader is not None:  # the reader's own feed: one call per piece
            self.feed = self.reader.bind(self._show, self._action)  # type: ignore[method-assign]
        self.shown: list[str] = []
        self.line: list[str] = []  # the generic path: pieces of the line not ended yet
        self.open = True

    def _show(self, line: str) -> None:
        if not self.open:
            return
        if line.lstrip()[:3] in ("```", "~~~"):  # a code fence: its reading may change
            self.open = False
            return
        self.emit(line)
        self.shown.append(line)

    def _action(self, item: Any) -> None:
        if self.on_action is not None:
            self.on_action(item)

    def feed(self, text: str) -> None:
        """Read one piece line by line (codecs without a stream reader)."""
        if not self.open:
            return
        if "\n" not in text:
            self.line.append(text)
            return
        head, _, tail = text.rpartition("\n")
        self.line.append(head + "\n")
        lines = "".join(self.line)
        self.line = [tail]
        if not lines.strip():
            return
        decoded = self.codec.decode(lines, self.specs)
        if decoded.calls or decoded.errors or decoded.text.strip() != lines.strip():
            self.open = False
            return
        self.emit(lines)
        self.shown.append(lines)

    def decode(self, text: str) -> Decoded:
        """The reply decoded: from the streaming reading when the codec has one."""
        if self.reader is not None:
            return self.reader.decoded(text)
        return self.codec.decode(text, self.specs)

    def rest(self, visible: str) -> str:
        """The part of the decoded `visible` text not streamed yet."""
        done = "".join(self.shown).strip()
        if not done:
            return visible
        if visible.startswith(done):
            return visible[len(done):]
        return visible  # the codec read earlier lines differently: show its reading in full


def action_notice(agent: str, item: Any) -> NoticeChunk:
    """An `action_read` notice: an action's block has closed (a preview; the decoded reply decides)."""
    verb = getattr(item, "verb", None) or getattr(item, "name", "") or "action"
    target = getattr(item, "path", None) or ""
    return NoticeChunk(agent=agent, data=NoticeData(
        code="action_read", message=f"{verb} {target}".strip(),
        details={"verb": str(verb), "target": str(target),
                 "executable": bool(getattr(item, "executable", False))}))


class ProtocolLines:
    """A text codec's reply read by `reading` (a FreeTextStreamer, which decodes it at the end) and
    passed on as it is written, line by line, to `emit`: the protocol text a person's channel reads
    to show the file's lines and the command as they come (channels/writing.py)."""

    def __init__(self, reading: FreeTextStreamer, emit: Callable[[str], None]) -> None:
        self.reading = reading
        self.emit = emit
        self.pending = ""
        aliases = getattr(reading.codec, "aliases", None)  # DML's `{{F:main}}`: shown as the file's path
        self.expand: Callable[[str], str] | None = getattr(aliases, "expand", None)

    def feed(self, text: str) -> None:
        self.reading.feed(text)
        self.pending += text
        if "\n" in self.pending:
            done, _, self.pending = self.pending.rpartition("\n")
            self.emit(self._shown(done + "\n"))

    def _shown(self, text: str) -> str:
        if self.expand is None or "{{" not in text:
            return text
        try:
            return self.expand(text)
        except LookupError:  # an alias the model made up: shown as written (the reading reports it)
            return text


class HeldText:
    """A native reply's text kept back (output guardrails must pass before anything shows)."""

    holds = True  # nor a native call's arguments as they form (core.model_call)

    def __init__(self, into: list[str]) -> None:
        self.feed = into.append
