"""The one-shot strict fast path: canonical Sym-Ops read in one tight loop, or None.

`fast_strict(text)` reads the lines a serializer or a well-behaved model writes — thoughts,
`$ verb @ target` actions (with their dash-fenced blocks, skipped with `str.find`), vitals,
`!` notes and blank lines — using only local variables and no per-line method calls. On the
first line it is not sure of (a question, a CR, a decorated target, anything that would be a
violation) it gives up and returns None; the caller then runs the full `Scanner`, which
decides. When it does return a result, that result is exactly the Scanner's (a test checks
this on the corpus and on random texts), so it is a pure speed-up of the common case.
"""

from __future__ import annotations

from duckflow.protocols.symops.model import SYNONYMS, Action, Note, SymOpsResult, normalize_verb
from duckflow.protocols.symops.scanner import (
    _FILE_TYPES,
    _SPACE_DECOR,
    _maybe_annotated,
    parse_vitals,
)


def fast_strict(text: str) -> SymOpsResult | None:
    """The strict reading of `text` when every line is plainly canonical, else None."""
    res = SymOpsResult()
    actions = res.actions
    thoughts = res.thoughts
    find = text.find
    n = len(text)
    pos = 0
    line_no = 0
    last_fence = 0  # the scanner stamps every action with the length of the last fence read
    while pos < n:
        nl = find("\n", pos)
        if nl < 0:
            nl = n
        c = text[pos]
        line_no += 1
        if c == "~":
            thoughts.append(text[pos + 1 : nl].strip())
            pos = nl + 1
            continue
        if c == "$":
            if text[pos + 1 : pos + 2] != " ":
                return None
            k = find(" @ ", pos + 2, nl)
            if k <= pos + 2:
                return None
            verb = text[pos + 2 : k]
            target = text[k + 3 : nl]
            typ = SYNONYMS.get(verb) or normalize_verb(verb)
            if not (" " not in verb and target and target[0] not in _SPACE_DECOR
                    and target[-1] not in _SPACE_DECOR and "\r" not in target
                    and (typ not in _FILE_TYPES or not _maybe_annotated(target))):  # fmt: skip
                return None
            dep = None
            if typ != "run" and ">" in target:
                target, _, dep_s = target.partition(">")
                target, dep = target.rstrip(" \t"), dep_s.strip(" \t") or None
            act = Action(typ, verb, target or None, None, dep)
            act.line = line_no
            actions.append(act)
            pos = nl + 1
            if text[pos : pos + 2] != "--":
                act.fence = last_fence
                continue
            # the next line starts with `--`: it must be this action's opening fence
            bs = find("\n", pos)
            if bs < 0:
                return None  # a block opened at the very end: never closed
            fence = text[pos:bs].rstrip(" \t")
            flen = len(fence)
            if fence.count("-") != flen:
                return None
            line_no += 1
            needle = "\n" + fence
            s = bs
            while True:
                i = find(needle, s)
                if i < 0:
                    return None  # unclosed block
                p = i + 1
                eol = find("\n", p + flen)
                if eol < 0:
                    eol = n
                if p + flen == eol or not text[p + flen : eol].strip(" \t"):
                    break
                s = p
            act.content = text[bs + 1 : i] if i > bs else ""
            act.fence = last_fence = flen
            line_no += text.count("\n", bs, p)
            pos = eol + 1
            continue
        if nl == pos:
            pos += 1
            continue
        line = text[pos:nl]
        if c == "#":
            if line[-1] == "\r":
                return None
            vitals = parse_vitals(line.rstrip(" \t"))
            if vitals is None:
                return None
            res.vitals.update(vitals)
        elif c == "!":
            if line[-1] == "\r":
                return None
            kind, _, tgt = line[1:].partition("@")
            res.notes.append(Note(kind.strip(), tgt.strip() or None))
        elif not line.isspace():
            return None  # a question, a stray block, prose...: the full scanner decides
        pos = nl + 1
    return res

