"""FuzzyParser: proposes actions the model never declared — never executable, always named.

Sources, in order: code blocks with no action line (path from the fence's info string, the
prose line just before, or the user's request), then a verb and a file name in prose. A path
is never invented: a block with no path anywhere gets `path=None`.
"""

from __future__ import annotations

import re
from functools import lru_cache

from duckflow.protocols.symops.model import SYNONYMS, Action, Repair, normalize_verb
from duckflow.protocols.symops.repair import Orphan, RepairOutput

EXTENSIONS = frozenset(
    "py pyi js mjs cjs ts tsx jsx json yaml yml toml md rst txt html htm css scss sql sh bash "
    "zsh go rs java kt c h cc cpp hpp cs rb php cfg ini env lock xml csv swift vue svelte dart "
    "lua pl r scala ex exs erl hs ml tf proto graphql dockerfile mk gradle ipynb".split()
)
_PATH = re.compile(r"(?<![\w/.@-])((?:\.{0,2}/)?(?:[\w.-]+/)*[\w-][\w.-]*\.([A-Za-z]\w{0,9}))(?![\w/-])")
_SPECIAL = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*(?:Dockerfile|Makefile|README|LICENSE))(?![\w/.-])")
_VERB = re.compile(r"\b(%s)\b" % "|".join(SYNONYMS), re.I)
# an edit hunk's first marker as models write it (SEARCH, aider's older ORIGINAL, spaced-out `<< <<`)
_HUNK = re.compile(r"^[ \t]*(?:<[ \t]*){5,9}(?:SEARCH|ORIGINAL)[ \t]*$", re.M)
_SHELL = frozenset({"bash", "sh", "shell", "console", "zsh", "cmd", "powershell", "terminal"})


@lru_cache(maxsize=256)
def find_paths(text: str) -> tuple[str, ...]:
    """File paths mentioned in `text`, in order, without duplicates."""
    found = [m.group(1) for m in _PATH.finditer(text) if m.group(2).lower() in EXTENSIONS]
    found += [m.group(1) for m in _SPECIAL.finditer(text)]
    return tuple(dict.fromkeys(p.strip("`'\"*") for p in found))


def _head_path(content: str) -> str | None:
    """A block whose first line is only a file path (aider's edit format): that path."""
    head = content.partition("\n")[0].strip().strip("`*")
    if not head or len(head) > 200:
        return None
    tight = head.replace(" / ", "/")
    found = find_paths(tight)
    return found[0] if len(found) == 1 and found[0] == tight else None


def _verb_in(text: str) -> str | None:  # the first verb named in `text`
    m = _VERB.search(text)
    return m.group(1) if m else None


class FuzzyParser:
    """Guesses actions from what AutoRepair could not attach to a declared action."""

    def guess(self, rep: RepairOutput, declared: list[Action], request: str | None = None
              ) -> tuple[list[Action], list[Repair]]:  # fmt: skip
        actions: list[Action] = []
        warnings: list[Repair] = []
        known = {a.path for a in declared if a.path}
        for orphan in rep.orphans:
            path, why = self._orphan_path(orphan, request)
            if path in known or (declared and not path):
                continue  # dropped below whatever the rest says: no need to work it out
            act, why = self._from_orphan(orphan, request, (path, why))
            if act is None or (act.path in known) or (declared and not act.path):
                continue
            known.add(act.path or "")
            actions.append(act)
            warnings.append(Repair(why, orphan.line, act.path or "no path"))
        if not declared and not actions:
            for line, text in rep.prose:
                verbs = list(_VERB.finditer(text))
                for k, vm in enumerate(verbs):  # each verb with the first file named after it
                    end = verbs[k + 1].start() if k + 1 < len(verbs) else len(text)
                    for path in find_paths(text[vm.start() : end])[:1]:
                        if path in known:
                            continue
                        known.add(path)
                        verb = vm.group(1)
                        actions.append(Action(normalize_verb(verb), verb, path, None, None, 0.2, False,
                                              None, line, "prose_mention"))  # fmt: skip
                        warnings.append(Repair("prose_mention", line, f"{verb} {path}"))
        return actions, warnings

    def _orphan_path(self, o: Orphan, request: str | None) -> tuple[str | None, str]:
        """Where an orphan block's path comes from (None: nowhere) and the warning's name."""
        tail = o.info.partition(":")[2]
        path: str | None = None
        why = "orphan_block"
        candidates = find_paths(tail or o.info)
        head = _head_path(o.content)
        if candidates:
            path, why = candidates[0], "path_from_fence"
        elif head is not None:
            path, why = head, "path_from_block_head"
        elif o.prose:
            named = find_paths(o.prose)
            if len(named) == 1:
                path, why = named[0], "path_from_prose"
        if path is None and request:
            named = find_paths(request)
            if len(named) == 1:
                path, why = named[0], "path_from_request"
        return path, why

    def _from_orphan(self, o: Orphan, request: str | None,
                     found: tuple[str | None, str] | None = None) -> tuple[Action | None, str]:  # fmt: skip
        lang = o.info.partition(":")[0]
        path, why = found if found is not None else self._orphan_path(o, request)
        content = o.content
        if why == "path_from_block_head":
            content = content.partition("\n")[2]  # the path line is not file content
        verb = "edit" if _HUNK.search(content) else (_verb_in(o.prose) if o.prose else None)
        if verb is None:
            verb = "run" if lang.lower() in _SHELL and path is None else "create"
        typ = normalize_verb(verb)
        if not content.strip():
            return None, why
        return Action(typ, verb, path, content, None, 0.3 if path else 0.1, False, None,
                      o.line, "orphan_block"), why  # fmt: skip
