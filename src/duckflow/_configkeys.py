"""Moving a config key to another place in the raw TOML data (old keys, the design notes' names)."""

from typing import Any


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
