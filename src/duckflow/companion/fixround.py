"""How a fix round after a failed check is shaped: its reply's token bound, and whether a small file is written whole.

A fix round asks for one change after a check failed (companion/singlecall.py). On a 2-core
machine its cost is the tokens the model generates: a 1.5B that rewrites at length or loops is
cut off at the bound of the file it fixes, not at the first reply's 700; and a file of a
screen or less is written again whole (`$ create`), as aider's whole format does, rather than
as a SEARCH of most of it followed by its REPLACE — about half the tokens, and no SEARCH to
get wrong.
"""

from __future__ import annotations

WHOLE_LINES = 30  # a file this short is rewritten whole in a fix round


def whole_fix(changed: list[str], editable: dict[str, str]) -> str:
    """The one small file a fix round rewrites whole ("" when it changed several, or a longer one)."""
    code = [p for p in changed if p.endswith(".py")]
    if len(code) != 1 or code[0] not in editable:
        return ""
    return code[0] if len(editable[code[0]].splitlines()) <= WHOLE_LINES else ""


MAX_REPLY = 700  # tokens of a step's reply
FIX_FLOOR = 300  # and of a fix round's, at least: a short file's rewrite with its thought and marker


def fix_bound(file_tokens: list[int]) -> int:
    """A fix round's reply bound: twice the largest file it may rewrite, plus the thought and the
    marker (a 1.5B that loops or rewrites at length after a failed check is cut off early, not at 700)."""
    return min(MAX_REPLY, max(FIX_FLOOR, 2 * max(file_tokens, default=0) + 120))
