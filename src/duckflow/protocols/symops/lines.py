"""Line-level pieces of AutoRepair: recognising fences, decorations, targets and vitals.

Pure functions and patterns, no state; `repair.py` and `blocks.py` put them to work. None of
the patterns can backtrack badly: no `.*` runs across lines, every line is matched alone.
"""

from __future__ import annotations

import re

from duckflow.protocols.symops.model import SYNONYMS

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


_WS = frozenset(" \t")
_PLAIN_START = frozenset("$~!?")
_SYM_START = frozenset("$~#`")
_STAR_LOW = frozenset("*_")


def split_action(core: str) -> tuple[str, str | None, str] | None:
    """An action line's verb, separator (`@`, `:` or None) and target, as `_ACTION` reads them.

    `$ verb @ target` with an alphabetic verb is read without the pattern (a test checks
    both agree); None when the line is not readable as an action.
    """
    if core[:2] == "$ ":
        k = core.find(" @ ", 2)
        if k > 2 and core[2:k].isalpha():
            return core[2:k], "@", core[k + 3 :].strip(" \t")
    m = _ACTION.fullmatch(core)
    return None if m is None else (m.group(1), m.group(2), m.group(3))


def undecorate(s: str) -> str:
    """Strip list markers, quotes, headings and bold/code wrapping around a protocol line."""
    if s[:3] == "**$" and len(s) > 4:  # `**$ verb @ x**`: what the general code returns
        return (s[2:-2] if s[-2:] == "**" else s[2:]).strip()
    return _undecorate_general(s)


def _undecorate_general(s: str) -> str:
    c = s[:1]
    if c in _PLAIN_START or (c.isalpha() and c not in "sSaA"):
        return s  # nothing a decoration starts with
    t = s
    if c == "`" or (c in "*_" and (s[1:2] in _SYM_START or (s[1:2] in _STAR_LOW and s[2:3] in _SYM_START))):
        pass  # `**$ ...`, `` `$ ...` ``: no list/heading/keyword prefix can match (see _PREFIX)
    else:
        t = _strip_prefixes(t)
    for w in _WRAP:
        if t.startswith(w) and len(t) > 2 * len(w) and t[len(w)].lstrip("*_`") in "$~#":
            t = t[len(w) : -len(w)] if t.endswith(w) else t[len(w) :]
            t = t.strip()
    return t


def _strip_prefixes(t: str) -> str:
    for _ in range(3):
        m = _PREFIX.match(t)
        if m is None:
            break
        rest = t[m.end() :].lstrip("*_` \t")
        if not rest or rest[0] not in "$~#":
            break
        t = t[m.end() :]
    return t


def _tick(s: str) -> tuple[str, str] | None:
    if s[:3] not in ("```", "~~~"):
        return None
    if s.count(s[0]) == len(s):
        return s, ""  # a bare fence, the common case
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
_INNER_EDGE = frozenset("`*\"':")


def strip_annotation(target: str) -> str | None:
    """`src/a.py (new file)` -> `src/a.py`; None when there is no trailing annotation."""
    if "(" not in target and "#" not in target and "-" not in target and "—" not in target and "–" not in target:
        return None
    m = _ANNOTATED.fullmatch(target.strip())
    return m.group(1) if m else None


def _clean_target(t: str) -> tuple[str, bool]:
    """Strip quotes, backticks, bold and a trailing colon around a target."""
    if (len(t) > 2 and t[0] == "`" == t[-1] and t[1] not in _INNER_EDGE and t[-2] not in _INNER_EDGE
            and not t[1].isspace() and not t[-2].isspace()):  # fmt: skip
        return t[1:-1], True  # `path`: one pair peeled, nothing more to strip (the common case)
    return _clean_target_general(t)


def _clean_target_general(t: str) -> tuple[str, bool]:
    """`_clean_target` without its fast path (a test checks the two agree)."""
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
    if "#" not in s and s.isascii():  # neither pattern can match: no `#`, none of the words
        low = s.lower()
        if "confidence" not in low and "mood" not in low and "focus" not in low and "stamina" not in low:
            return None
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
