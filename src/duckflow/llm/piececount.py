"""Exact BPE token counts without loading the BPE table: known pieces counted from a disk cache.

tiktoken encodes a text by cutting it with the encoding's pre-tokenizer regex and encoding each
piece on its own, so a text's token count is the sum of its pieces' counts. Prompts are made of
the same few thousand pieces (template words, tool names, common words) over and over, so the
count of each piece seen once is kept in `$DUCKFLOW_HOME/cache/tokenizers/<name>.pieces.json`.

- `bound(text)`: known pieces exactly, unknown pieces at their UTF-8 length (a token is at least
  one byte, so this is never below the true count); `exact` says whether every piece was known.
  No BPE table is loaded. This is what a budget needs to decide that nothing has to be cut.
- `count(text)`: exact; loads the BPE table (through `llm.tokens`, verified by sha256) only
  when the text has pieces never seen, counts them, and remembers them.

A prompt is rendered again every turn with most of its lines unchanged, so `bound` cuts a text
into segments at line starts no piece crosses (`segments`) and keeps each segment's bound: a
turn splits only its new lines.

Loading cl100k costs ~0.35 s and ~40 MiB; the cache makes a warm start load nothing.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

MAX_PIECES = 200_000
SEGMENTS_KEPT = 4096  # segment bounds kept per counter (cleared when full or when pieces change)
# encodings whose pre-tokenizer no piece crosses a line start of `segments` (property-tested)
_SEGMENTED = frozenset({"cl100k_base", "o200k_base"})


def _literal(node: ast.AST, names: dict[str, ast.AST]) -> str:
    """A string built from literals: a constant, a module-level name, or `"sep".join([...])`."""
    if isinstance(node, ast.Name) and node.id in names:
        return _literal(names[node.id], names)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join"
            and isinstance(node.func.value, ast.Constant) and len(node.args) == 1
            and isinstance(node.args[0], ast.List | ast.Tuple)):
        return str(node.func.value.value).join(_literal(e, names) for e in node.args[0].elts)
    value = ast.literal_eval(node)
    if not isinstance(value, str):
        raise ValueError("not a string")
    return value


@lru_cache(maxsize=4)
def pat_str(name: str) -> str:
    """The encoding's pre-tokenizer pattern, read from tiktoken_ext's source without importing it.

    Importing `tiktoken_ext.openai_public` imports tiktoken (and its BPE loader); reading the
    `pat_str` its constructor returns from the source keeps the pattern tiktoken's own.
    """
    spec = importlib.util.find_spec("tiktoken_ext.openai_public")
    if spec is None or spec.origin is None:
        raise LookupError("tiktoken_ext.openai_public is not installed")
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    names: dict[str, ast.AST] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            names.setdefault(node.targets[0].id, node.value)
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef) and fn.name == name:
            local = dict(names)
            for node in ast.walk(fn):
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    local[node.targets[0].id] = node.value
                if isinstance(node, ast.Dict):
                    for key, value in zip(node.keys, node.values, strict=True):
                        if isinstance(key, ast.Constant) and key.value == "pat_str":
                            return _literal(value, local)
    raise LookupError(f"no pat_str for {name} in {spec.origin}")


@lru_cache(maxsize=4)
def pre_tokenizer(name: str) -> Any:
    """The encoding's pre-tokenizer, compiled with `regex` (tiktoken's own pattern dialect)."""
    import regex

    return regex.compile(pat_str(name))


_ASCII_CLASSES = ((r"\p{L}++", "[A-Za-z]++"), (r"\p{N}{1,3}+", "[0-9]{1,3}+"), (r"\p{L}", "A-Za-z"),
                  (r"\p{N}", "0-9"))
_NOT_PLAIN_ASCII = re.compile(r"[^\t\n\x0b\x0c\r -~]")  # control characters where \s may differ


@lru_cache(maxsize=4)
def ascii_pre_tokenizer(name: str) -> re.Pattern[str] | None:
    """The same pattern for plain ASCII text with the standard library's `re` (3.11 has possessive
    quantifiers), so English prompts are split without importing `regex` (~45 ms of a start).
    Letters and digits are the only classes that differ on ASCII; None when the pattern uses
    anything else (e.g. o200k's letter-case classes)."""
    pattern = pat_str(name)
    for uni, ascii_class in _ASCII_CLASSES:
        pattern = pattern.replace(uni, ascii_class)
    return None if "\\p{" in pattern else re.compile(pattern)


def _plain(text: str) -> bool:
    """Whether the `re` pattern splits `text` as tiktoken's does: plain ASCII, plus characters
    outside ASCII that are neither letters, numbers nor spaces (`·`, `—`, `→`, emoji: prompts
    carry a few), which both dialects put in the same class (`[^\\s\\p{L}\\p{N}]`)."""
    if text.isascii():
        return not _NOT_PLAIN_ASCII.search(text)
    for ch in set(_NOT_PLAIN_ASCII.findall(text)):
        if ch.isascii() or ch.isalpha() or ch.isnumeric() or ch.isspace() or ch.isdecimal():
            return False
    return True


def split(name: str, text: str) -> list[str]:
    """The encoding's pre-tokenizer pieces of `text`."""
    if _plain(text):
        fast = ascii_pre_tokenizer(name)
        if fast is not None:
            return fast.findall(text)
    return list(pre_tokenizer(name).findall(text))


def segments(text: str) -> list[str]:
    """`text` cut after each "\n" whose next line starts with neither whitespace nor "/".

    No piece of cl100k's or o200k's pre-tokenizer crosses such a cut: a piece that holds a "\n"
    ends in whitespace (cl100k's punctuation takes trailing newlines, o200k's also "/"), and no
    letter, number or contraction piece starts with one. So the pieces of `text` are the pieces
    of its segments, in order, and a count is the sum of its segments' counts.
    """
    if "\n" not in text:
        return [text]
    lines = text.split("\n")
    out: list[str] = []
    current = lines[0]
    for line in lines[1:]:
        if line and not line[0].isspace() and line[0] != "/":
            out.append(current + "\n")
            current = line
        else:
            current += "\n" + line
    out.append(current)
    return out


class PieceCounter:
    def __init__(self, name: str, path: Path | None = None) -> None:
        self.name = name
        self.path = path
        self._lock = threading.Lock()
        self.pieces: dict[str, int] = self._load()
        self._dirty = False
        self._segmented = name in _SEGMENTED
        self._bounds: dict[str, tuple[int, bool]] = {}  # segment -> bound, valid for _bounds_at pieces
        self._bounds_at = -1

    def _load(self) -> dict[str, int]:
        if self.path is None or not self.path.is_file():
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("encoding") != self.name:
            return {}
        pieces = data.get("pieces")
        if not isinstance(pieces, dict):
            return {}
        # a count outside 1..bytes cannot be true: such an entry is dropped, never trusted
        return {p: n for p, n in pieces.items()
                if isinstance(p, str) and type(n) is int and 1 <= n <= len(p.encode("utf-8", "surrogatepass"))}

    def split(self, text: str) -> list[str]:
        return split(self.name, text)

    def bound(self, text: str) -> tuple[int, bool]:
        """(an upper bound of the token count, whether it is exact); loads no BPE table.

        The sum of its segments' bounds (the same figure: the same pieces), each segment's kept
        while the known pieces stay the same, so text seen before is not split again."""
        if not self._segmented or "\n" not in text:
            return self._bound(text)
        cache = self._bounds
        if self._bounds_at != len(self.pieces):  # pieces learnt (or dropped): bounds may have changed
            cache.clear()
            self._bounds_at = len(self.pieces)
        total, exact = 0, True
        for segment in segments(text):
            hit = cache.get(segment)
            if hit is None:
                hit = self._bound(segment)
                if len(cache) >= SEGMENTS_KEPT:
                    cache.clear()
                cache[segment] = hit
            total += hit[0]
            exact = exact and hit[1]
        return total, exact

    def _bound(self, text: str) -> tuple[int, bool]:
        total, exact = 0, True
        known = self.pieces
        for piece in self.split(text):
            n = known.get(piece)
            if n is None:
                exact = False
                n = len(piece.encode("utf-8", "surrogatepass"))
            total += n
        return total, exact

    def estimate(self, text: str, guess: Any) -> tuple[int, bool]:
        """Known pieces exactly, unknown ones by `guess(piece)`; (count, whether exact)."""
        total, exact = 0, True
        known = self.pieces
        for piece in self.split(text):
            n = known.get(piece)
            if n is None:
                exact = False
                n = guess(piece)
            total += n
        return total, exact

    def count(self, text: str, encoding: Any) -> int:
        """The exact count; `encoding()` returns the tiktoken Encoding, called only when needed."""
        total = 0
        unknown: list[str] = []
        known = self.pieces
        for piece in self.split(text):
            n = known.get(piece)
            if n is None:
                unknown.append(piece)
            else:
                total += n
        if unknown:
            enc = encoding()
            with self._lock:
                for piece in unknown:
                    n = len(enc.encode_ordinary(piece))
                    total += n
                    if len(known) < MAX_PIECES:
                        known[piece] = n
                        self._dirty = True
            self.save()
        return total

    def save(self) -> None:
        """Write the cache atomically (a crash leaves the old file or the new one)."""
        if self.path is None or not self._dirty:
            return
        with self._lock:
            data = json.dumps({"encoding": self.name, "pieces": self.pieces}, ensure_ascii=False)
            self._dirty = False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
            tmp.write_text(data, encoding="utf-8")
            tmp.replace(self.path)
        except OSError:
            pass  # a read-only home only costs a slower next start


def piece_counter(name: str) -> PieceCounter:
    """The process-wide counter of `name` for the current DUCKFLOW_HOME.

    Looked up by the variables `duckflow_home()` reads, so a budget counting every turn does not
    build the home path each time, and a changed home is still followed."""
    env = os.environ
    key = (name, env.get("DUCKFLOW_HOME"), env.get("XDG_DATA_HOME"), env.get("HOME"))
    counter = _BY_ENV.get(key)
    if counter is None:
        from duckflow.paths import duckflow_home

        counter = _counter(name, duckflow_home() / "cache" / "tokenizers" / f"{name}.pieces.json")
        if len(_BY_ENV) >= 16:
            _BY_ENV.clear()
        _BY_ENV[key] = counter
    return counter


_BY_ENV: dict[tuple[str | None, ...], PieceCounter] = {}


@lru_cache(maxsize=8)
def _counter(name: str, path: Path) -> PieceCounter:
    return PieceCounter(name, path)
