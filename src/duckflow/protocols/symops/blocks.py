"""Fences and content blocks for AutoRepair: where a block opens, where it closes, what it is.

`BlockRules` holds the state shared by the whole repair pass (output lines, the line map,
the action waiting for its block, open wrapper fences) and the rules for blocks: an
action's block, a fence wrapped around the whole reply, a code block with no action
(an orphan, kept for the fuzzy stage), a block cut off, closed by the wrong fence, left open
before the next action, or ended early by a content line `--`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from duckflow.protocols.symops.lines import (
    _ACTION_AT,
    _SHELL_TAGS,
    _WS,
    PLAIN_TAGS,
    SYMOPS_TAGS,
    _fence_like,
    _tick,
    parse_loose_vitals,
    undecorate,
)
from duckflow.protocols.symops.model import Repair
from duckflow.protocols.symops.serializer import safe_fence


@dataclass
class Orphan:
    """A code block with no action line before it (kept for the fuzzy stage, never run)."""

    content: str
    info: str
    line: int
    prose: str  # the prose line just before it, where a path may be named


@dataclass
class RepairOutput:
    """The repaired text plus what the processor needs to judge it."""

    text: str
    repairs: list[Repair] = field(default_factory=list)
    line_map: list[int] = field(default_factory=list)  # output line index -> original 1-based line
    guesses: dict[int, str] = field(default_factory=dict)  # output line of an action -> why guessed
    action_repairs: dict[int, list[str]] = field(default_factory=dict)
    orphans: list[Orphan] = field(default_factory=list)
    prose: list[tuple[int, str]] = field(default_factory=list)


def strict_block_lines(lines: list[str]) -> set[int]:
    """1-based numbers of the lines the strict grammar reads as block content.

    An action line (decorated or not) directly followed by a dash fence opens a block that the
    same fence closes; blocks never closed are left out (the strict reading has none there).
    """
    out: set[int] = set()
    i, n = 0, len(lines)
    while i < n - 1:
        ln = lines[i]
        if ("$" in ln or "＄" in ln) and ln.strip() and undecorate(ln.strip()).lstrip()[:1] in ("$", "＄"):
            fence = lines[i + 1].rstrip(" \t")
            if fence.strip()[:2] == "--" and fence.strip().count("-") == len(fence.strip()):
                j = i + 2
                while j < n and lines[j].rstrip(" \t") != fence:
                    j += 1
                if j < n:
                    out.update(range(i + 3, j + 1))
                    i = j + 1
                    continue
        i += 1
    return out


class BlockRules:
    """State of one repair pass, and the block rules (AutoRepair adds the line rules)."""

    lines: list[str]
    out: list[str]
    map: list[int]
    res: RepairOutput
    wrappers: list[str]
    pending: int | None
    pending_type: str
    pending_blank: list[int]
    last_prose: tuple[int, str] | None
    last_block: tuple[int, int, int, str, int] | None
    strict_blocks: bool = False  # first pass: a block closes only at its own fence, no heuristics
    unsure: bool = False  # the first pass met a block it cannot read strictly
    block_lines: set[int]  # 1-based lines the strict reading puts inside a block

    def _fix(self, name: str, line: int, detail: str = "", action: int | None = None) -> None:
        self.res.repairs.append(Repair(name, line, detail))
        if action is not None:
            self.res.action_repairs.setdefault(action, []).append(name)

    def _emit(self, line: str, orig: int) -> int:
        self.out.append(line)
        self.map.append(orig)
        return len(self.out) - 1

    def _next_nonblank(self, j: int) -> str | None:
        lines = self.lines
        while j < len(lines):
            if lines[j].strip():
                return undecorate(lines[j].strip())
            j += 1
        return None

    def _flush_pending(self) -> None:
        if self.pending is not None:
            for orig in self.pending_blank:
                self._emit("", orig)
        self.pending = None
        self.pending_blank = []

    # -- fences and blocks -------------------------------------------------------------------
    def _fence(self, i: int, raw: str, s: str, tick: tuple[str, str] | None) -> int:
        ln = i + 1
        if (self.pending is not None and tick is not None and self.pending_type not in ("create", "edit")
                and self._find_tick_close(i, raw, s, tick) < 0):  # fmt: skip
            # `$ run @ ls` then a lone ``` that closes nothing: a stray fence, not content
            self._flush_pending()
            self._fix("stray_delimiter", ln, s)
            return i + 1
        if self.pending is not None and (not self.pending_blank or self.pending_type in ("create", "edit")):
            act = self.pending
            if self.pending_blank:
                self._fix("blank_before_block", ln, action=act)
            self.pending, self.pending_blank = None, []
            return self._block(i, raw, s, tick, act, [])
        self._flush_pending()
        if tick is not None:
            info = tick[1].lower()
            if (info in SYMOPS_TAGS or (info in PLAIN_TAGS and self._next_is_protocol(i + 1))
                    or (info in _SHELL_TAGS and _ACTION_AT.match(self._next_nonblank(i + 1) or ""))):  # fmt: skip
                self.wrappers.append(tick[0])
                self._fix("unwrapped_reply_fence", ln, s)
                return i + 1
            return self._block(i, raw, s, tick, None, [])
        # a dash fence with no action: a block only if it is closed before the next action
        j = i + 1
        while j < len(self.lines):
            t = self.lines[j].rstrip(" \t")
            if t == s:
                return self._block(i, raw, s, None, None, [])
            if undecorate(t.strip())[:1] == "$":
                break
            j += 1
        lb = self.last_block
        if lb is not None and self.strict_blocks:
            self.unsure = True  # a stray fence after a block: where that block ends is a question
        elif lb is not None and lb[3] == s and raw.rstrip(" \t") == s:
            return self._merge(i, lb)
        self._fix("markdown_rule_dropped" if len(s) > 2 else "stray_delimiter", ln, s)
        return i + 1

    def _find_tick_close(self, i: int, raw: str, s: str, tick: tuple[str, str]) -> int:
        indent = raw[: len(raw) - len(raw.lstrip())]
        depth = [0]
        for j in range(i + 1, len(self.lines)):
            if self._closes(self.lines[j], s, tick, indent, depth):
                return j
        return -1

    def _next_is_content_fence(self, j: int) -> bool:
        """The line at `j` opens a fence with a language (```python): a content block."""
        if j >= len(self.lines):
            return False
        t = _tick(self.lines[j].strip())
        return t is not None and bool(t[1]) and t[1].lower() not in SYMOPS_TAGS

    def _next_is_protocol(self, j: int) -> bool:
        nxt = self._next_nonblank(j)
        return nxt is not None and (nxt[0] in "$~" or parse_loose_vitals(nxt) is not None)

    def _closes(self, raw: str, s: str, tick: tuple[str, str] | None, indent: str, depth: list[int]) -> bool:
        if tick is None:
            return raw.rstrip(" \t") == indent + s if not indent else raw.strip() == s
        t = raw.strip()
        if t[:1] != tick[0][0]:
            return False
        tt = _tick(t)
        if tt is None:
            return False
        if tt[1]:
            if len(tick[0]) == 3 and tt[0] == tick[0]:
                depth[0] += 1
            return False
        if len(tt[0]) < len(tick[0]):
            return False
        if depth[0] and len(tick[0]) == 3:
            depth[0] -= 1
            return False
        return True

    def _block(self, i: int, raw: str, s: str, tick: tuple[str, str] | None, act: int | None,
               prefix: list[str]) -> int:  # fmt: skip
        lines, n, ln = self.lines, len(self.lines), i + 1
        indent = raw[: len(raw) - len(raw.lstrip())]
        depth = [0]
        close = -1
        if tick is None and not indent:  # the common case, kept tight
            for j in range(i + 1, n):
                t = lines[j]
                if t[:1] == s[0] and t.rstrip(" \t") == s:
                    close = j
                    break
        else:
            mark = tick[0][0] if tick is not None else "-"
            bare = tick[0] if tick is not None else None
            for j in range(i + 1, n):
                t = lines[j]
                if mark not in t:  # most content lines: no fence character at all
                    continue
                if t == bare and not depth[0]:  # the same bare fence, unindented: what _closes says
                    close = j
                    break
                c0 = t[:1]
                if (c0 == mark or (c0 in _WS and t.lstrip()[:1] == mark)) and self._closes(t, s, tick, indent, depth):
                    close = j
                    break
        guess = None
        resume = close + 1
        if close > i + 1 and tick is None and not self.strict_blocks and "@" in lines[close - 1] and _ACTION_AT.match(
                undecorate(lines[close - 1].strip())):  # fmt: skip
            # the "closer" is the next action's opening fence: this block was never closed
            if close > i + 2 and _fence_like(lines[close - 2].strip()):
                close, resume, guess = close - 2, close - 1, "mismatched_block_close"  # `--` ... ```
            else:
                close, resume, guess = close - 1, close - 1, "missing_block_close"
        if close < 0 and self.strict_blocks and act is not None:
            guess, resume, self.unsure = "truncated_block", n, True
        elif close < 0:
            close, at_action = self._alt_close(i + 1)
            guess = "missing_block_close" if at_action else "mismatched_block_close"
            resume = close if at_action else close + 1
            if close < 0:
                guess, resume = "truncated_block", n
        end = close if close >= 0 else n
        if self.strict_blocks and tick is None and guess is None:  # a dash block closed by its fence
            self.block_lines.update(range(i + 2, end + 1))
        body = prefix + lines[i + 1 : end] if prefix else lines[i + 1 : end]
        if indent:
            body = [b[len(indent) :] if b.startswith(indent) else b for b in body]
        if guess == "truncated_block":
            while body and not body[-1].strip():
                body.pop()
        if act is None:
            prose = self.last_prose[1] if self.last_prose and self.last_prose[0] >= i - 2 else ""
            info = tick[1] if tick else ""
            self.res.orphans.append(Orphan("\n".join(body), info, ln, prose))
            self._fix("orphan_code_block", ln, info)
            return resume
        if tick is not None:
            self._fix("markdown_fence_block", ln, s, act)
        if indent:
            self._fix("indented_block", ln, action=act)
        if guess is not None:
            self.res.guesses[act] = guess
            self._fix(guess, ln if guess == "truncated_block" else end + 1, action=act)
        fence = safe_fence(body, len(s) if tick is None and s.count("-") == len(s) else 2)  # `---` stays `---`
        out, omap = self.out, self.map
        out.append(fence)
        omap.append(ln)
        out.extend(body)
        if prefix:
            omap.extend(min(i + 2 + k, n) for k in range(len(body)))
        else:
            omap.extend(range(i + 2, i + 2 + len(body)))
        out.append(fence)
        omap.append(end + 1 if end < n else n)
        self.last_block = (act, len(self.out), len(self.res.repairs), s, len(self.res.prose))
        return resume

    def _alt_close(self, start: int) -> tuple[int, bool]:
        """Where an unclosed block most likely ends: a fence-like line followed by an action (or
        the end), or else the next action line itself. (-1, False) when there is none."""
        lines = self.lines
        for k in range(start, len(lines)):
            t = lines[k].strip()
            if not t:
                continue
            if "@" in t and _ACTION_AT.match(undecorate(t)):
                return k, True
            tk = _tick(t)
            if _fence_like(t) and (tk is None or not tk[1]):
                nxt = self._next_nonblank(k + 1)
                if nxt is None or nxt[0] == "$" or (tk is not None and self.wrappers):
                    return k, False
        return -1, False

    def _merge(self, i: int, lb: tuple[int, int, int, str, int]) -> int:
        """A stray `--` after a closed block with only prose between: the block went on."""
        act, out_len, rep_len, fence, prose_len = lb
        closer_orig = self.map[out_len - 1]
        # everything emitted since the block closed was prose or blank lines
        if any(not (o == "" or o.startswith("~ ")) for o in self.out[out_len:]):
            self._fix("stray_delimiter", i + 1, fence)
            return i + 1
        start_line = closer_orig - 1  # 0-based index of the closing fence line
        body_lines = self.out[act + 2 : out_len - 1]
        del self.out[act + 1 :]
        del self.map[act + 1 :]
        del self.res.repairs[rep_len:]
        del self.res.prose[prose_len:]
        prefix = body_lines + self.lines[start_line:i + 1]
        self.res.guesses[act] = "ambiguous_block_close"
        r = self._block(i, fence, fence, None, act, prefix)
        self._fix("ambiguous_block_close", i + 1, action=act)
        return r
