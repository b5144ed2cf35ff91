"""AutoRepair: turns a reply the way real models write it into canonical Sym-Ops, naming each fix.

The five rules of seed 000 §4.1 (markdown blocks, missing symbols, delimiters, indentation,
vitals format) plus what real replies need (CRLF, thinking tags, a fence around the whole
reply, list/bold decoration of action lines, prose). Repairs only ever touch lines *outside*
content blocks: once a block is opened its lines are copied byte for byte until its closer.
Anything guessed (an action with no `$`, a block cut off or closed by the wrong fence) is
recorded in `guesses` so that the processor marks it not executable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from duckflow.protocols.symops.model import SYNONYMS, Repair
from duckflow.protocols.symops.scanner import is_dash_fence
from duckflow.protocols.symops.serializer import safe_fence

SYMOPS_TAGS = frozenset({"symops", "sym-ops", "sym_ops", "symop", "sym"})
PLAIN_TAGS = frozenset({"", "text", "txt", "plaintext", "plain", "markdown", "md", "shell-session"})
_TICK = re.compile(r"(`{3,}|~{3,})[ \t]*([^\s`]*)[^`]*$")
_PREFIX = re.compile(
    r"(?:[-*+•][ \t]+|\d{1,3}[.)][ \t]+|>[ \t]?|#{1,6}[ \t]+"
    r"|[*_]{0,2}(?:step|action|next|then|command|operation|task|操作|手順|アクション)[ \t]*\d*[ \t]*[:.)：-][*_]{0,2}[ \t]*)",
    re.I,
)
_UNI_DASH_FENCE = frozenset({"—", "——", "–", "––", "−−", "ー", "ーー"})
_ACTION = re.compile(r"\$[ \t]*([^\s@:*`]+)[*_`]*[ \t]*(?:([@:])[ \t]*)?(.*?)[ \t]*$")
_OPTION = re.compile(r"[ \t]*(?:\d{1,3}[.)]|[-*])[ \t]+(.*?)[ \t]*$")
_LOOSE_VITAL = re.compile(r"#([cmfs])[ \t]*[:=]?[ \t]*([0-9]*\.?[0-9]+)[ \t]*(%?)")
_WORD_VITAL = re.compile(r"\b(confidence|mood|focus|stamina)\b[*_]*[ \t]*[:=][ \t]*[*_]*([0-9]*\.?[0-9]+)[ \t]*(%?)", re.I)
_VITAL_RESIDUE = re.compile(r"(?i)[\s,;|*_`()\[\]]|duck|vitals?|:")
_BARE = re.compile(r"(%s)[ \t]+(?:(?:the|a|new)[ \t]+)?(?:file[ \t]+)?([\w./-]*\w\.\w{1,8})[ \t]*:?" % "|".join(SYNONYMS), re.I)
_THINK_OPEN = re.compile(r"\s*<(think|thinking|reasoning|reflection)>", re.I)
_THINK_CLOSE_ONLY = re.compile(r"^[ \t]*</(think|thinking|reasoning)>[ \t]*$", re.I | re.M)
_WRAP = ("**", "__", "`", "*", "_")
_LANG_FENCE = re.compile(r"--[ \t]?(python|py|javascript|js|typescript|ts|bash|sh|shell|json|yaml|yml|toml|sql|"
                         r"html|css|markdown|md|go|rust|java|c|cpp|text|txt|ruby|php|diff)[ \t]*", re.I)
_SHELL_WORDS = frozenset({"rm", "exec", "shell"})  # `$ rm x` without `@` is a shell prompt
_SHELL_TAGS = frozenset({"bash", "sh", "shell", "console", "zsh"})
_ACTION_AT = re.compile(r"\$[ \t]*[^\s@:*`]+[ \t]*@")


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


_WS = frozenset(" \t")
_PLAIN_START = frozenset("$~!?")


def undecorate(s: str) -> str:
    """Strip list markers, quotes, headings and bold/code wrapping around a protocol line."""
    c = s[:1]
    if c in _PLAIN_START or (c.isalpha() and c not in "sSaA"):
        return s  # nothing a decoration starts with
    t = s
    for _ in range(3):
        m = _PREFIX.match(t)
        if m is None:
            break
        rest = t[m.end() :].lstrip("*_` \t")
        if not rest or rest[0] not in "$~#":
            break
        t = t[m.end() :]
    for w in _WRAP:
        if t.startswith(w) and len(t) > 2 * len(w) and t[len(w)].lstrip("*_`") in "$~#":
            t = t[len(w) : -len(w)] if t.endswith(w) else t[len(w) :]
            t = t.strip()
    return t


def _tick(s: str) -> tuple[str, str] | None:
    if s[:3] not in ("```", "~~~"):
        return None
    m = _TICK.fullmatch(s)
    return (m.group(1), m.group(2)) if m else None


def _fence_like(s: str) -> bool:
    return (len(s) >= 2 and s.count("-") == len(s)) or (s[:3] in ("```", "~~~") and _tick(s) is not None)


_ANNOTATED = re.compile(r"[`*\"']*([^\s`*\"']+)[`*\"']*[ \t]+(?:\(.*\)|#.*|-{1,2}[ \t].*|[—–][ \t]?.*)")
_SENTENCE_END = re.compile(r"[^\s]*[^\s./]\.[A-Za-z0-9]+[.。]")
_WIDE = str.maketrans({"＄": "$", "＠": "@", "～": "~", "〜": "~", "＃": "#", "＞": ">", "：": ":"})


_QUOTES = frozenset("`*\"'")
_OPEN_QUOTES = frozenset("“‘「『«")
_CLOSE_QUOTES = frozenset("”’」』»")


def strip_annotation(target: str) -> str | None:
    """`src/a.py (new file)` -> `src/a.py`; None when there is no trailing annotation."""
    if not any(c in target for c in ("(", "#", "-", "—", "–")):
        return None
    m = _ANNOTATED.fullmatch(target.strip())
    return m.group(1) if m else None


def _clean_target(t: str) -> tuple[str, bool]:
    """Strip quotes, backticks, bold and a trailing colon around a target."""
    if t and t[0] not in _QUOTES and t[-1] not in _QUOTES and t[-1] not in ":”’」』»" and t[0] not in _OPEN_QUOTES and t == t.strip():
        return t, False
    c = t.strip()
    if c.endswith(":") and " " not in c:
        c = c[:-1]
    if c[:1] in _OPEN_QUOTES and c[-1:] in _CLOSE_QUOTES:
        c = c[1:-1].strip()
    for _ in range(3):  # only matching pairs: a command may end with a quote of its own
        if len(c) >= 2 and c[0] == c[-1] and c[0] in _QUOTES:
            c = c[1:-1].strip()
        else:
            break
    if c.endswith(":") and " " not in c:
        c = c[:-1]
    return c, c != t.strip()


def parse_loose_vitals(s: str) -> tuple[str, bool] | None:
    """A canonical vitals line for `s` (and whether a value was a percentage), or None."""
    found: list[tuple[str, str, str]] = []
    for m in _LOOSE_VITAL.finditer(s):
        found.append((m.group(1), m.group(2), m.group(3)))
    residue = _LOOSE_VITAL.sub("", s)
    if not found:
        for m in _WORD_VITAL.finditer(s):
            found.append((m.group(1)[0].lower(), m.group(2), m.group(3)))
        residue = _WORD_VITAL.sub("", s)
    if not found or _VITAL_RESIDUE.sub("", residue):
        return None
    parts, pct = [], False
    for key, num, percent in found:
        value = float(num)
        if percent or value > 1.0:
            if value > 100:
                return None
            pct, num = True, repr(value / 100)
        parts.append(f"#{key}{num}")
    return " ".join(parts), pct


class AutoRepair:
    """Line-by-line repair; see the module docstring. `repair(text)` -> RepairOutput."""

    def repair(self, text: str) -> RepairOutput:
        self.out: list[str] = []
        self.map: list[int] = []
        self.res = RepairOutput(text="")
        text = self._preprocess(text)
        self.lines = lines = text.split("\n")
        self.wrappers: list[str] = []
        self.pending: int | None = None  # output index of an action waiting for its block
        self.pending_type = ""
        self.pending_blank: list[int] = []
        self.in_question = 0
        self.last_prose: tuple[int, str] | None = None
        self.prose_end = -1
        self.last_block: tuple[int, int, int, str, int] | None = None
        i, n = 0, len(lines)
        while i < n:
            i = self._step(i, n)
        self._flush_pending()
        while self.out and not self.out[-1]:
            self.out.pop()
            self.map.pop()
        self.res.text = "\n".join(self.out) + ("\n" if self.out else "")
        self.res.line_map = self.map
        return self.res

    # -- helpers -----------------------------------------------------------------------------
    def _fix(self, name: str, line: int, detail: str = "", action: int | None = None) -> None:
        self.res.repairs.append(Repair(name, line, detail))
        if action is not None:
            self.res.action_repairs.setdefault(action, []).append(name)

    def _emit(self, line: str, orig: int) -> int:
        self.out.append(line)
        self.map.append(orig)
        return len(self.out) - 1

    def _preprocess(self, text: str) -> str:
        if "\r\n" in text:
            text = text.replace("\r\n", "\n")
            self._fix("crlf_line_endings", 1)
        m = _THINK_OPEN.match(text)
        if m is not None:
            close = re.compile(rf"</{m.group(1)}\s*>", re.I).search(text, m.end())
            end = close.end() if close else len(text)
            self._fix("thinking_removed", 1, "" if close else "unclosed thinking: all of it dropped")
            text = "\n" * text.count("\n", 0, end) + text[end:]
        else:
            c = _THINK_CLOSE_ONLY.search(text)
            if c is not None and not re.search(r"<(think|thinking|reasoning)>", text[: c.start()], re.I):
                self._fix("thinking_removed", 1, "closing tag only")
                text = "\n" * text.count("\n", 0, c.end()) + text[c.end() :]
        common = 0
        if not re.search(r"(?m)^[^ \n]", text):  # every non-empty line starts with a space
            widths = [len(ln) - len(ln.lstrip(" ")) for ln in text.split("\n") if ln.strip()]
            common = min(widths) if widths else 0
        if common:
            text = "\n".join(ln[common:] if ln.strip() else ln.strip() for ln in text.split("\n"))
            self._fix("common_indent_removed", 1, f"{common} spaces")
        return text

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

    # -- one line ----------------------------------------------------------------------------
    def _step(self, i: int, n: int) -> int:
        raw = self.lines[i]
        c = raw[:1]
        if c == "~" and raw[:3] != "~~~" and self.pending is None and not self.in_question:
            self._emit("~ " + raw[1:].strip(), i + 1)  # a plain thought: nothing to repair
            return i + 1
        s = raw.strip()
        if s and s[0] in "＄～〜＃":
            raw = raw.translate(_WIDE)
            s = raw.strip()
            self._fix("full_width_symbols", i + 1)
        ln = i + 1
        wants_block = (self.pending is not None and not self.pending_blank and self.pending_type in ("create", "edit")
                       and not self._next_is_content_fence(i + 1))  # fmt: skip
        if self.wrappers and s and s[0] == self.wrappers[-1][0] and not wants_block:
            t = _tick(s)
            if t is not None and not t[1] and len(t[0]) >= len(self.wrappers[-1]):
                self.wrappers.pop()
                return i + 1
        if not s:
            if self.pending is not None:
                self.pending_blank.append(ln)
            else:
                self.in_question = 0
                self._emit("", ln)
            return i + 1
        if self.in_question:
            m = _OPTION.fullmatch(raw)
            if m is not None and not _ACTION_AT.match(undecorate(m.group(1))):
                self._emit(f"  {self.in_question}. {m.group(1)}", ln)
                self.in_question += 1
                return i + 1
            self.in_question = 0
        tick = _tick(s)
        dash = is_dash_fence(s)
        if tick is not None or dash:
            return self._fence(i, raw, s, tick)
        if self.pending is not None and s in _UNI_DASH_FENCE and not self.pending_blank:
            self._fix("unicode_dash_fence", ln, s, self.pending)  # `--` turned into a dash
            return self._fence(i, s, s, None)
        if self.pending is not None and s[:2] == "--" and _LANG_FENCE.fullmatch(s):
            self._fix("fence_with_language", ln, s, self.pending)
            return self._fence(i, "--", "--", None)
        self._flush_pending()
        core = undecorate(s)
        if core[0] == "$":
            return self._action(i, raw, s, core)
        if core != s and core[0] == "~" or s[0] == "~":
            if raw != s or core != s:
                self._fix("indented_protocol_line" if core == s else "line_decoration", ln)
            self._emit("~ " + core[1:].strip(), ln)
        elif s[0] in "?!" and not s.startswith("!["):
            if raw != s:
                self._fix("indented_protocol_line", ln)
            if s[0] == "?":
                self.in_question = 1
                self._emit("? " + s[1:].strip(), ln)
            else:
                self._emit("! " + s[1:].strip(), ln)
        else:
            vit = parse_loose_vitals(core) if ("#" in core or ":" in core or "=" in core) else None
            if vit is not None:
                if vit[0] != s:
                    self._fix("vitals_format", ln, "percent" if vit[1] else "")
                self._emit(vit[0], ln)
            else:
                return self._other(i, s)
        return i + 1

    def _other(self, i: int, s: str) -> int:
        ln = i + 1
        plain = s.replace("*", "").replace("`", "").strip()
        pm = _PREFIX.match(plain)
        if pm is not None:
            plain = plain[pm.end() :].strip()
        m = _BARE.fullmatch(plain)
        if m is not None:
            idx = self._emit(f"$ {m.group(1)} @ {m.group(2)}", ln)
            self.res.guesses[idx] = "missing_action_symbol"
            self._fix("missing_action_symbol", ln, plain, idx)
            self.pending, self.pending_type = idx, SYNONYMS[m.group(1).lower()]
            return i + 1
        self._emit("~ " + s, ln)
        if self.prose_end != ln - 1:  # one repair per run of prose lines
            self._fix("prose_as_thought", ln)
        self.prose_end = ln
        self.res.prose.append((ln, s))
        self.last_prose = (i, s)
        return i + 1

    def _action(self, i: int, raw: str, s: str, core: str) -> int:
        ln = i + 1
        m = _ACTION.fullmatch(core)
        names: list[str] = []
        if core != s:
            names.append("line_decoration")
        elif raw != s:
            names.append("indented_protocol_line")
        if m is None:
            self._emit("~ " + s, ln)
            self._fix("unreadable_action", ln, s)
            return i + 1
        verb, sep, target = m.group(1), m.group(2), m.group(3)
        if sep is None and target and (verb.lower() not in SYNONYMS or verb.lower() in _SHELL_WORDS
                                       or target[0] == "-"):  # fmt: skip
            # `$ pip install x` is a shell prompt in prose, not an action with a missing `@`
            self._emit("~ " + s, ln)
            self._fix("shell_prompt_line", ln, s)
            self.res.prose.append((ln, s))
            return i + 1
        if sep is None and target:
            names.append("missing_at")
        elif sep == ":":
            names.append("colon_for_at")
        dep = ""
        typ = SYNONYMS.get(verb.lower(), verb.lower())
        if typ != "run" and ">" in target:
            target, _, dep = target.partition(">")
            dep, dchanged = _clean_target(dep)
            if dchanged:
                names.append("decorated_target")
        target, changed = _clean_target(target)
        if changed:
            names.append("decorated_target")
        if typ in ("create", "edit", "delete", "test"):
            bare = strip_annotation(target)
            if bare is not None:
                target = bare
                names.append("target_annotation")
            if _SENTENCE_END.fullmatch(target):  # `$ create @ a.py.` - a sentence's full stop
                target = target[:-1]
                names.append("target_punctuation")
        line = f"$ {verb} @ {target}".rstrip() + (f" > {dep}" if dep else "")
        idx = self._emit(line, ln)
        for name in dict.fromkeys(names):
            self._fix(name, ln, s if name != "indented_protocol_line" else "", idx)
        self.pending, self.pending_type = idx, typ
        return i + 1

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
            nxt = self._next_nonblank(i + 1) or ""
            if (info in SYMOPS_TAGS or (info in PLAIN_TAGS and self._next_is_protocol(i + 1))
                    or (info in _SHELL_TAGS and _ACTION_AT.match(nxt))):  # fmt: skip
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
        if lb is not None and lb[3] == s and raw.rstrip(" \t") == s:
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
            for j in range(i + 1, n):
                t = lines[j]
                c0 = t[:1]
                if (c0 == mark or (c0 in _WS and t.lstrip()[:1] == mark)) and self._closes(t, s, tick, indent, depth):
                    close = j
                    break
        guess = None
        resume = close + 1
        if close > i + 1 and tick is None and "@" in lines[close - 1] and _ACTION_AT.match(
                undecorate(lines[close - 1].strip())):  # fmt: skip
            # the "closer" is the next action's opening fence: this block was never closed
            if close > i + 2 and _fence_like(lines[close - 2].strip()):
                close, resume, guess = close - 2, close - 1, "mismatched_block_close"  # `--` ... ```
            else:
                close, resume, guess = close - 1, close - 1, "missing_block_close"
        if close < 0:
            close, at_action = self._alt_close(i + 1)
            guess = "missing_block_close" if at_action else "mismatched_block_close"
            resume = close if at_action else close + 1
            if close < 0:
                guess, resume = "truncated_block", n
        end = close if close >= 0 else n
        body = prefix + lines[i + 1 : end]
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
        fence = safe_fence(body)
        self._emit(fence, ln)
        self.out.extend(body)
        if prefix:
            self.map.extend(min(i + 2 + k, n) for k in range(len(body)))
        else:
            self.map.extend(range(i + 2, i + 2 + len(body)))
        self._emit(fence, end + 1 if end < n else n)
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
