"""One bracket-depth scan without parsing, shared by the provider payload checks and JSON replies.

Its own module so that reading a JSON reply (protocols/jsonreply) does not import the
providers' pydantic wire models (llm/payloads) on a run that never talks to a provider.
"""

from __future__ import annotations

MAX_DEPTH = 64  # nesting of one event or of one tool call's arguments


def nests_deeper(raw: str, limit: int = MAX_DEPTH) -> bool:
    """Brackets nested deeper than `limit` outside JSON strings, without parsing (a text with
    fewer brackets than that in all is not scanned)."""
    if raw.count("[") + raw.count("{") <= limit:
        return False
    level = 0
    in_str = esc = False
    for ch in raw:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            level += 1
            if level > limit:
                return True
        elif ch in "]}" and level:
            level -= 1
    return False
