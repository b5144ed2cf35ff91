"""A random walker over a GBNF grammar (the subset Duckflow writes): every string it yields is one
the grammar allows, so a test can check that the reader accepts whatever a constrained model
could write. Character classes are sampled from a pool rich in the characters that break readers
(delimiter pieces, `|`, braces, `<`, quotes, newlines, non-ASCII)."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

POOL = list("abcdefghijklmnopqrstuvwxyzTRHE0123456789 _-./:=|[](){}<>\"'\\`~$@#!?*+,;\t\n") + [
    "\U0001f986", "\u25b6", "\u25c0", "\ufe0f", "\u3000", "é", "日", "｜", "：", "\r"]
ESC = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "[": "[", "]": "]", "-": "-", "^": "^", "/": "/"}


@dataclass
class Node:
    kind: str  # lit | cls | ref | alt | seq | rep
    value: object = None
    lo: int = 0
    hi: int = 0


class Walker:
    def __init__(self, grammar: str, seed: int = 0, star_max: int = 4) -> None:
        self.rules: dict[str, Node] = {}
        self.rnd = random.Random(seed)
        self.star_max = star_max
        text = re.sub(r"(?m)^\s*#.*$", "", grammar)
        for m in re.finditer(r"(?ms)^([A-Za-z0-9-]+)\s*::=\s*(.*?)(?=^[A-Za-z0-9-]+\s*::=|\Z)", text):
            self.src, self.pos = m.group(2).strip(), 0
            self.rules[m.group(1)] = self._alt()
            assert self.pos == len(self.src), f"rule {m.group(1)}: cannot read {self.src[self.pos:]!r}"

    # -- parsing --------------------------------------------------------------------------
    def _ws(self) -> None:
        while self.pos < len(self.src) and self.src[self.pos] in " \t\n":
            self.pos += 1

    def _alt(self) -> Node:
        options = [self._seq()]
        while self.pos < len(self.src) and self.src[self.pos] == "|":
            self.pos += 1
            options.append(self._seq())
        return options[0] if len(options) == 1 else Node("alt", options)

    def _seq(self) -> Node:
        items: list[Node] = []
        while True:
            self._ws()
            if self.pos >= len(self.src) or self.src[self.pos] in "|)":
                return Node("seq", items)
            items.append(self._postfix(self._atom()))

    def _char(self) -> str:
        c = self.src[self.pos]
        if c != "\\":
            self.pos += 1
            return c
        e = self.src[self.pos + 1]
        if e in "xuU":
            n = {"x": 2, "u": 4, "U": 8}[e]
            self.pos += 2 + n
            return chr(int(self.src[self.pos - n:self.pos], 16))
        self.pos += 2
        return ESC[e]

    def _atom(self) -> Node:
        c = self.src[self.pos]
        if c == '"':
            self.pos += 1
            out = ""
            while self.src[self.pos] != '"':
                out += self._char()
            self.pos += 1
            return Node("lit", out)
        if c == "[":
            self.pos += 1
            neg = self.src[self.pos] == "^"
            self.pos += neg
            ranges: list[tuple[str, str]] = []
            while self.src[self.pos] != "]":
                a = self._char()
                if self.src[self.pos] == "-" and self.src[self.pos + 1] != "]":
                    self.pos += 1
                    ranges.append((a, self._char()))
                else:
                    ranges.append((a, a))
            self.pos += 1
            return Node("cls", (neg, ranges))
        if c == "(":
            self.pos += 1
            inner = self._alt()
            self._ws()
            assert self.src[self.pos] == ")"
            self.pos += 1
            return inner
        m = re.compile(r"[A-Za-z0-9-]+").match(self.src, self.pos)
        assert m, f"unexpected {self.src[self.pos:]!r}"
        self.pos = m.end()
        return Node("ref", m.group(0))

    def _postfix(self, node: Node) -> Node:
        if self.pos >= len(self.src):
            return node
        c = self.src[self.pos]
        if c in "*+?":
            self.pos += 1
            lo, hi = {"*": (0, -1), "+": (1, -1), "?": (0, 1)}[c]
            return Node("rep", node, lo, hi)
        m = re.compile(r"\{(\d+)(,(\d*))?\}").match(self.src, self.pos)
        if m:
            self.pos = m.end()
            lo = int(m.group(1))
            hi = lo if m.group(2) is None else (int(m.group(3)) if m.group(3) else -1)
            return Node("rep", node, lo, hi)
        return node

    # -- walking --------------------------------------------------------------------------
    def sample(self, start: str = "root") -> str:
        out: list[str] = []
        self._walk(self.rules[start], out)
        return "".join(out)

    def _walk(self, node: Node, out: list[str]) -> None:
        if node.kind == "lit":
            out.append(str(node.value))
        elif node.kind == "ref":
            self._walk(self.rules[str(node.value)], out)
        elif node.kind == "seq":
            for item in node.value:  # type: ignore[attr-defined]
                self._walk(item, out)
        elif node.kind == "alt":
            self._walk(self.rnd.choice(node.value), out)  # type: ignore[arg-type]
        elif node.kind == "rep":
            hi = node.lo + self.star_max if node.hi < 0 else min(node.hi, node.lo + self.star_max)
            for _ in range(self.rnd.randint(node.lo, hi)):
                self._walk(node.value, out)  # type: ignore[arg-type]
        else:
            neg, ranges = node.value  # type: ignore[misc]
            inside = [ch for ch in POOL if any(a <= ch <= b for a, b in ranges)]
            allowed = [ch for ch in POOL if ch not in inside] if neg else inside or [ranges[0][0]]
            out.append(self.rnd.choice(allowed))
