"""Did-you-mean for configuration keys: an unknown setting named with the closest known one, not pydantic's text."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from duckflow.errors import ConfigError


def known_keys(root: type[BaseModel], loc: tuple[Any, ...] | list[Any]) -> list[str]:
    """The setting names a table of the configuration `root` accepts (`()` for the top level)."""
    model: Any = root
    for part in loc:
        field = getattr(model, "model_fields", {}).get(str(part))
        annotation = getattr(field, "annotation", None)
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return []
        model = annotation
    return sorted(getattr(model, "model_fields", {}))


def unknown_key(root: type[BaseModel], loc: tuple[Any, ...] | list[Any], files: str) -> ConfigError:
    """`unknown setting 'modles' (did you mean 'models'?)` for a key the configuration has no field for."""
    where = ".".join(str(p) for p in loc)
    known = known_keys(root, list(loc)[:-1])
    close = difflib.get_close_matches(str(loc[-1]), known, n=1)
    return ConfigError(f"unknown setting '{where}'" + (f" (did you mean '{close[0]}'?)" if close else ""),
                       hint=f"fix it in {files}" + ("" if close else f"; the known ones here: {', '.join(known)}"))


def misspelled(root: type[BaseModel], path: Path, keys: list[str]) -> None:
    """Raise for the first of a workspace file's refused `keys` that is a near miss of a real setting."""
    for name in keys:
        *table, key = name.split(".")
        known = known_keys(root, table)
        close = difflib.get_close_matches(key, known, n=1) if known and key not in known else []
        if close:
            raise ConfigError(f"{path}: unknown setting '{name}' (did you mean '{close[0]}'?)", hint=f"fix it in {path}")
