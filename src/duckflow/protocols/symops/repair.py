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

from duckflow.protocols.symops.blocks import BlockRules, Orphan, RepairOutput, strict_block_lines
from duckflow.protocols.symops.lines import (
    _ACTION_AT,
    _BARE,
    _LANG_FENCE,
    _OPTION,
    _PLAIN_START,
    _PREFIX,
    _SENTENCE_END,
    _SHELL_WORDS,
    _UNI_DASH_FENCE,
    _WIDE,
    _clean_target,
    _tick,
    parse_loose_vitals,
    split_action,
    strip_annotation,
    undecorate,
)
from duckflow.protocols.symops.model import SYNONYMS, Repair
from duckflow.protocols.symops.scanner import is_dash_fence
from duckflow.protocols.symops.thinking import strip_thinking

__all__ = ["AutoRepair", "Orphan", "RepairOutput", "parse_loose_vitals", "undecorate"]

# guesses about where a block ends: a first pass that reads blocks strictly must not need any
BLOCK_GUESSES = frozenset({"truncated_block", "mismatched_block_close", "missing_block_close",
                           "ambiguous_block_close"})  # fmt: skip


class AutoRepair(BlockRules):
    """Line-by-line repair; see the module docstring. `repair(text)` -> RepairOutput."""

    def repair(self, text: str) -> RepairOutput:
        """Blocks read strictly first; only when that leaves a block unsure, the block heuristics.

        A reply whose blocks are correctly delimited keeps the meaning the strict grammar gives
        it whatever noise is around them (prose, CRLF, a fence around the reply, thinking,
        decoration): the heuristics (a next action line closes an open block, another fence
        closes it, a stray fence continues it) run only when the strict block reading leaves a
        block unclosed or a stray fence after a block — a reply that is not valid anyway.
        """
        self.block_lines: set[int] = set()
        first = self._pass(text, strict_blocks=True)
        if not self.unsure and not any(g in BLOCK_GUESSES for g in first.guesses.values()):
            return first
        # either pass may read a line the strict reading puts inside a block as an action (a
        # markdown fence around it, a heuristic close); whether it is one is a guess, so such an
        # action never runs (`action_in_block`)
        return self._pass(text, strict_blocks=False)

    def _in_block(self, idx: int, ln: int, s: str) -> None:
        if ln in self.block_lines and idx not in self.res.guesses:
            self.res.guesses[idx] = "action_in_block"
            self._fix("action_in_block", ln, s, idx)
            self.unsure = True  # the first pass lost the strict block structure somewhere

    def _pass(self, text: str, *, strict_blocks: bool) -> RepairOutput:
        self.strict_blocks = strict_blocks
        self.unsure = False
        self.out: list[str] = []
        self.map: list[int] = []
        self.res = RepairOutput(text="")
        text = self._preprocess(text)
        self.lines = lines = text.split("\n")
        if strict_blocks:  # the strict reading's block content, whatever fences are around it
            self.block_lines |= strict_block_lines(lines)
        self.wrappers: list[str] = []
        self.pending: int | None = None  # output index of an action waiting for its block
        self.pending_type = ""
        self.pending_blank: list[int] = []
        self.steal_line = 0
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
    def _preprocess(self, text: str) -> str:
        if "\r\n" in text:
            text = text.replace("\r\n", "\n")
            self._fix("crlf_line_endings", 1)
        text, detail = strip_thinking(text)
        if detail:
            self._fix("thinking_removed", 1, "" if detail == "thinking section" else detail)
        common = 0
        if not re.search(r"(?m)^[^ \n]", text):  # every non-empty line starts with a space
            widths = [len(ln) - len(ln.lstrip(" ")) for ln in text.split("\n") if ln.strip()]
            common = min(widths) if widths else 0
        if common:
            pad = " " * common  # (a blank line of a block keeps what is past the common indent)
            text = "\n".join(ln[common:] if ln[:common] == pad else ln.strip() for ln in text.split("\n"))
            self._fix("common_indent_removed", 1, f"{common} spaces")
        return text

    # -- one line ----------------------------------------------------------------------------
    def _step(self, i: int, n: int) -> int:
        raw = self.lines[i]
        c = raw[:1]
        pending = self.pending
        if c == "~" and raw[:3] != "~~~" and pending is None and not self.in_question:
            self.out.append("~ " + raw[1:].strip())  # a plain thought: nothing to repair
            self.map.append(i + 1)
            return i + 1
        s = raw.strip()
        ln = i + 1
        if not s:
            if pending is not None:
                self.pending_blank.append(ln)
            else:
                self.in_question = 0
                self.out.append("")
                self.map.append(ln)
            return ln
        c = s[0]
        if c in "＄～〜＃":
            raw = raw.translate(_WIDE)
            s = raw.strip()
            c = s[0]
            self._fix("full_width_symbols", ln)
        if self.wrappers and c == self.wrappers[-1][0]:
            wants_block = (pending is not None and not self.pending_blank and self.pending_type in ("create", "edit")
                           and not self._next_is_content_fence(i + 1))  # fmt: skip
            t = _tick(s) if not wants_block else None
            if t is not None and not t[1] and len(t[0]) >= len(self.wrappers[-1]):
                self.wrappers.pop()
                return ln
        if self.in_question:
            m = _OPTION.fullmatch(raw)
            if m is not None and not _ACTION_AT.match(undecorate(m.group(1))):
                self._emit(f"  {self.in_question}. {m.group(1)}", ln)
                self.in_question += 1
                return i + 1
            self.in_question = 0
        tick = _tick(s) if c == "`" or c == "~" else None
        dash = c == "-" and is_dash_fence(s)
        if tick is not None or dash:
            return self._fence(i, raw, s, tick)
        if pending is not None:
            if s in _UNI_DASH_FENCE and not self.pending_blank:
                self._fix("unicode_dash_fence", ln, s, pending)  # `--` turned into a dash
                return self._fence(i, s, s, None)
            if s[:2] == "--" and _LANG_FENCE.fullmatch(s):
                self._fix("fence_with_language", ln, s, pending)
                return self._fence(i, "--", "--", None)
            self.steal_line = ln  # a bare verb line here would take the waiting action's block
            self._flush_pending()
        core = s if c in _PLAIN_START or (c.isalpha() and c not in "sSaA") else undecorate(s)  # (its own first test)
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
            nxt = self.lines[i + 1] if i + 1 < len(self.lines) else ""
            if (is_dash_fence(nxt) and nxt[:1] == "-" and pm is None and s[: len(m.group(1))] == m.group(1)
                    and self.steal_line != ln):  # fmt: skip
                # seed §4.1 `_fix_missing_symbols`: a line that starts with the verb (`create a.py`)
                # directly followed by a `--` block is the model's declaration without its
                # symbols; it runs (penalised). A list item (`- run x.sh`, `2. run x.py`), a
                # decorated verb, or a line right after a declared action that is still waiting
                # for its block (it would take that block) is a guess, never run.
                self._fix("missing_symbols", ln, plain, idx)
            else:  # a verb and a file in prose or a list: proposed, never run
                self.res.guesses[idx] = "missing_action_symbol"
                self._fix("missing_action_symbol", ln, plain, idx)
            self._in_block(idx, ln, plain)
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
        parts = split_action(core)
        names: list[str] = []
        if core != s:
            names.append("line_decoration")
        elif raw != s:
            names.append("indented_protocol_line")
        if parts is None:
            self._emit("~ " + s, ln)
            self._fix("unreadable_action", ln, s)
            return i + 1
        verb, sep, target = parts
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
            if target[-1:] in (".", "。") and _SENTENCE_END.fullmatch(target):  # `$ create @ a.py.` - a sentence's full stop
                target = target[:-1]
                names.append("target_punctuation")
        line = f"$ {verb} @ {target}".rstrip() + (f" > {dep}" if dep else "")
        out = self.out
        idx = len(out)
        out.append(line)
        self.map.append(ln)
        if names:
            repairs = self.res.repairs
            done = self.res.action_repairs.setdefault(idx, [])
            for name in dict.fromkeys(names) if len(names) > 1 else names:
                repairs.append(Repair(name, ln, s if name != "indented_protocol_line" else ""))
                done.append(name)
        self._in_block(idx, ln, s)
        self.pending, self.pending_type = idx, typ
        return i + 1
