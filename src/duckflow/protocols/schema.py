"""What JSON types a tool parameter's schema accepts (shared by the DML reader and the grammar writer)."""

from __future__ import annotations

from typing import Any


def schema_types(schema: dict[str, Any]) -> list[str]:
    """The JSON types a parameter accepts: `type` (a name or a list) and `anyOf`/`oneOf` branches.

    An Optional parameter (`anyOf: [{type: number}, {type: null}]`, what pydantic writes for
    `float | None`) accepts a number or null; a schema with no type at all accepts a string.
    """
    kind = schema.get("type")
    out: list[str] = [kind] if isinstance(kind, str) else [k for k in kind or [] if isinstance(k, str)]
    for key in ("anyOf", "oneOf"):
        for branch in schema.get(key) or []:
            if isinstance(branch, dict):
                out += [t for t in schema_types(branch) if t not in out]
    return out or ["string"]
