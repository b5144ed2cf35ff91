"""Serializer: writes a result back as canonical, compact Sym-Ops (parse(serialize(r)) == r).

A block's fence is the shortest run of two or more dashes that no content line equals, so a
content line `--` (or `---`) never closes its block early.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from duckflow.protocols.symops.model import VITAL_ORDER, Action, SymOpsResult


def safe_fence(lines: Iterable[str], least: int = 2) -> str:
    """The shortest dash fence (>= `least`) that none of `lines` would be read as."""
    lines = lines if isinstance(lines, list) else list(lines)
    if "\n--" not in "\n" + "\n".join(lines):  # the common case, decided at C speed
        return "-" * least
    taken = {len(s) for s in (ln.rstrip(" \t") for ln in lines if ln[:2] == "--") if s.count("-") == len(s)}
    n = least
    while n in taken:
        n += 1
    return "-" * n


_INFO = re.compile(r"[\w+#.-]*")
_PROSE_EXT = (".md", ".markdown", ".mdx", ".rst", ".txt", ".adoc", ".html", ".htm")


def wrapped_in_fence(typ: str, path: str | None, content: str) -> bool:
    """True for create/edit content of a code file that is exactly one markdown code fence."""
    if typ not in ("create", "edit") or not path or content[:3] != "```":
        return False
    name = path.rsplit("/", 1)[-1].lower()
    if "." not in name or name.endswith(_PROSE_EXT):
        return False
    first, _, rest = content.partition("\n")
    body, sep, last = rest.rpartition("\n")
    if not sep:
        body, last = "", rest
    return last.strip() == "```" and "```" not in body and bool(_INFO.fullmatch(first.strip()[3:]))


def format_number(value: float) -> str:
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") and "e" not in text else text


def action_lines(action: Action) -> list[str]:
    verb = action.verb if action.verb and not any(c in action.verb for c in " \t@$") else action.type
    head = f"$ {verb} @ {action.path or ''}".rstrip()
    if action.depends_on:
        head += f" > {action.depends_on}"
    if action.content is None:
        return [head]
    body = action.content.split("\n") if action.content else []
    fence = safe_fence(body, 3 if wrapped_in_fence(action.type, action.path, action.content) else 2)
    return [head, fence, *body, fence]


def action_text(action: Action) -> str:
    """`"\n".join(action_lines(action))` without splitting a large content into lines first."""
    content = action.content
    if content is None or "\n--" in "\n" + content:
        return "\n".join(action_lines(action))
    head = action_lines(Action(action.type, action.verb, action.path, None, action.depends_on))[0]
    fence = "---" if wrapped_in_fence(action.type, action.path, content) else "--"
    return f"{head}\n{fence}\n{content}\n{fence}" if content else f"{head}\n{fence}\n{fence}"


def serialize(result: SymOpsResult) -> str:
    """Canonical Sym-Ops text for `result`: thoughts, vitals, actions, questions, errors."""
    out = [f"~ {t}" for t in result.thoughts]
    if result.vitals:
        out.append(
            " ".join(f"#{k[0]}{format_number(result.vitals[k])}" for k in VITAL_ORDER if k in result.vitals)
        )
    for action in result.actions:
        out.extend(action_lines(action))
    for q in result.questions:
        out.append(f'? "{q.text}"')
        out.extend(f"  {i}. {o}" for i, o in enumerate(q.options, 1))
    for note in result.notes:
        out.append(f"! {note.kind} @ {note.target}" if note.target else f"! {note.kind}")
    return "\n".join(out) + "\n" if out else ""
