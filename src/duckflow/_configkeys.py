"""The config sections' base: old keys and the design notes' names moved to their place, with a note."""

# no `from __future__ import annotations`: pydantic evaluates annotations (see config.py)

import logging
from typing import Any, ClassVar

from pydantic import (
    BaseModel,
    ConfigDict,
    PrivateAttr,
    ValidatorFunctionWrapHandler,
    model_validator,
)


def move_key(data: dict[str, Any], old: str, new: str) -> bool:
    """Move the value at dotted `old` to dotted `new` inside `data` (tables on the way are
    copied, a table the move leaves empty is dropped, a value already at `new` wins)."""
    *tables, last = old.split(".")
    found: Any = data
    for table in tables:  # is it there at all? (nothing is copied for the common "no")
        found = found.get(table)
        if not isinstance(found, dict):
            return False
    if last not in found:
        return False
    parents: list[tuple[dict[str, Any], str]] = []
    cur = data
    for table in tables:
        cur[table] = sub = dict(cur[table])
        parents.append((cur, table))
        cur = sub
    value = cur.pop(last)
    for parent, table in reversed(parents):
        if parent[table]:
            break
        del parent[table]
    *tables, last = new.split(".")
    cur = data
    for table in tables:
        sub = cur.get(table, {})
        if not isinstance(sub, dict):
            return True  # `gate = 5`: left for validation to name
        cur[table] = sub = dict(sub)
        cur = sub
    cur.setdefault(last, value)
    return True


_noted: set[str] = set()  # deprecation notes already logged in this process


class _Section(BaseModel):
    """A config section. `_LEGACY` maps an old key (dotted inside the section: "ollama_host",
    "approval.required_by_default") to its place (dotted: "ollama.host"): the old key is still
    read, moved there, and noted once (`deprecations`, and a log warning). `_NOTE` words the
    note: an old key of this project is deprecated; a seed's name is an alias."""

    model_config = ConfigDict(extra="forbid")
    _LEGACY: ClassVar[dict[str, str]] = {}
    _NOTE: ClassVar[str] = "{old} is deprecated: write it as {new}"
    _WARN: ClassVar[bool] = True  # log the note (an alias is only listed, by `config show`)
    _deprecations: list[str] = PrivateAttr(default_factory=lambda: [])  # not `list`: see core/chunks.py _Data

    @model_validator(mode="wrap")
    @classmethod
    def _nest_legacy_keys(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        notes: list[str] = []
        if cls._LEGACY and isinstance(data, dict) and any(k.split(".", 1)[0] in data for k in cls._LEGACY):
            data = dict(data)
            prefix = f"{cls._SECTION}." if cls._SECTION else ""
            for old, new in cls._LEGACY.items():
                if move_key(data, old, new):
                    notes.append(cls._NOTE.format(old=prefix + old, new=prefix + new))
        model = handler(data)
        if notes:
            model._deprecations = notes
            for note in notes if cls._WARN else ():
                if note not in _noted:
                    _noted.add(note)
                    logging.getLogger("duckflow.config").warning(note)
        return model

    _SECTION: ClassVar[str] = ""

    @property
    def deprecations(self) -> list[str]:
        return list(self._deprecations)
