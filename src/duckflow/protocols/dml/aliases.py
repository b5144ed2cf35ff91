"""File aliases for DML: short names from file stems, stable across the turns of a session.

`src/main.py` becomes `main`; a second `user.py` becomes `user_2`, then `user_3`, in the order
the paths were registered. The model writes `{{F:main}}`; `expand` puts the path back before a
tool runs. (Seed 002 also shows `user_api`/`user_db` as collision-free names; the issue fixes
the `_2`, `_3` rule, which is predictable for the model and for people, so we follow it.)
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from pathlib import PurePosixPath

ALIAS_REF = re.compile(r"\{\{\s*F\s*[:：]\s*([^{}\s]+?)\s*\}\}")
_NOT_WORD = re.compile(r"[^\w]+")


def _norm_path(path: str) -> str:
    p = path.strip().replace("\\", "/")
    while p.startswith("./"):
        p = p[2:]
    return p


def stem_alias(path: str) -> str:
    """The base alias of `path`: its file stem with non-word characters turned into `_`."""
    name = PurePosixPath(_norm_path(path)).name
    stem = name.lstrip(".").split(".", 1)[0]
    base = _NOT_WORD.sub("_", stem).strip("_")
    return base or "file"


class UnknownAlias(LookupError):
    """`{{F:name}}` names no registered alias; `suggestion` is the closest one ('' if none)."""

    def __init__(self, alias: str, suggestion: str) -> None:
        hint = f"; did you mean `{suggestion}`?" if suggestion else ""
        super().__init__(f"unknown file alias `{alias}`{hint}")
        self.alias = alias
        self.suggestion = suggestion


class AliasTable:
    """Path <-> alias, in registration order. Registering a known path returns its alias."""

    def __init__(self, paths: Iterable[str] = ()) -> None:
        self._by_alias: dict[str, str] = {}
        self._by_path: dict[str, str] = {}
        for p in paths:
            self.add(p)

    def add(self, path: str) -> str:
        """Register `path` (idempotent) and return its alias."""
        key = _norm_path(path)
        if key in self._by_path:
            return self._by_path[key]
        base = stem_alias(key)
        alias, n = base, 1
        while alias in self._by_alias:
            n += 1
            alias = f"{base}_{n}"
        self._by_alias[alias] = key
        self._by_path[key] = alias
        return alias

    def path(self, alias: str) -> str:
        """The path of `alias`; raises UnknownAlias naming the closest alias."""
        try:
            return self._by_alias[alias]
        except KeyError:
            close = difflib.get_close_matches(alias, list(self._by_alias), n=1, cutoff=0.5)
            raise UnknownAlias(alias, close[0] if close else "") from None

    def alias(self, path: str) -> str | None:
        return self._by_path.get(_norm_path(path))

    def __contains__(self, alias: object) -> bool:
        return alias in self._by_alias

    def __len__(self) -> int:
        return len(self._by_alias)

    def items(self) -> list[tuple[str, str]]:
        """(alias, path) pairs in registration order."""
        return list(self._by_alias.items())

    def unknown(self, text: str) -> list[UnknownAlias]:
        """The `{{F:x}}` references in `text` that name no alias."""
        out: list[UnknownAlias] = []
        for m in ALIAS_REF.finditer(text):
            try:
                self.path(m.group(1))
            except UnknownAlias as err:
                out.append(err)
        return out

    def expand(self, text: str) -> str:
        """`text` with every `{{F:alias}}` replaced by its path; raises UnknownAlias."""
        return ALIAS_REF.sub(lambda m: self.path(m.group(1)), text)

    def compress(self, text: str) -> str:
        """A registered path written as `{{F:alias}}` when `text` is exactly that path."""
        alias = self.alias(text)
        return f"{{{{F:{alias}}}}}" if alias else text

    def render(self) -> str:
        """The table as F definition macros, one per line (for the system prompt)."""
        return "\n".join(f"🦆▶️[F:{a}={p}]◀️🦆" for a, p in self._by_alias.items())

    def to_dict(self) -> dict[str, str]:
        return dict(self._by_alias)

    @classmethod
    def from_dict(cls, data: dict[str, str]) -> AliasTable:
        """Restore a table saved with `to_dict` (order and aliases kept exactly)."""
        table = cls()
        for alias, path in data.items():
            key = _norm_path(path)
            table._by_alias[alias] = key
            table._by_path[key] = alias
        return table
