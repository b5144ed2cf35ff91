"""`make run`'s last part in words: each example reply before (what the model wrote) and after (the actions read from it).

One line per action: `create config.py ✓`, `edit README.md ✓ (repaired: missing @)`,
`create test_config.py ✗ cut off → not run`. What a reply looked like is said in a few
words from what the reader had to repair (markdown decoration, a fence, prose only). The
JSON the protocol commands print stays behind `python -m duckflow.demo --json`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

REPAIR_WORDS = {"missing_at": "missing @", "decorated_target": "path in backticks", "line_decoration": "markdown",
                "markdown_fence_block": "``` fence", "synonym_verb": "another verb", "compact": "no spaces"}
KINDS = {".symops": "symops", ".dml": "dml", ".json": "json"}


def read(path: Path, kind: str) -> dict[str, Any]:
    """The protocol reader's result as a dict, as `duckflow protocol parse` prints it."""
    text = path.read_text(encoding="utf-8")
    if kind == "symops":
        from duckflow.protocols.symops import parse

        return dict(parse(text).to_dict())
    if kind == "dml":
        from duckflow.protocols import dml

        return dict(dml.parse(text).to_dict())
    from duckflow.protocols.jsonreply import read_json

    reply = read_json(text)
    return {"ok": reply.ok, "value": reply.value, "repairs": reply.repairs, "errors": reply.errors}


def _before(kind: str, data: dict[str, Any]) -> str:
    names = {r["name"] if isinstance(r, dict) else str(r) for r in data.get("repairs") or []}
    names |= {w["name"] for w in data.get("warnings") or [] if isinstance(w, dict)}
    if kind == "json":
        return "JSON inside a ``` fence, with a trailing comma" if names else "plain JSON"
    if kind == "dml":
        return "a ReAct reply with one 🦆 macro"
    if "orphan_code_block" in names:
        return "code with no action line (only a file named in the prose)"
    if names & {"line_decoration", "decorated_target", "markdown_fence_block", "unwrapped_reply_fence"}:
        return "markdown-decorated actions"
    return "clean actions"


def _symops_actions(data: dict[str, Any]) -> list[str]:
    out = []
    repairs = [r for r in data.get("repairs") or [] if isinstance(r, dict)]
    errors = [e for e in data.get("errors") or [] if isinstance(e, dict)]
    for a in data.get("actions") or []:
        path = str(a.get("path") or a.get("content") or "")
        words = [REPAIR_WORDS[r["name"]] for r in repairs
                 if r["name"] in REPAIR_WORDS and path and path in str(r.get("detail", ""))]
        said = f"{a.get('verb')} {path}".strip()
        if a.get("executable"):
            out.append(f"{said} ✓" + (f" (repaired: {', '.join(dict.fromkeys(words))})" if words else ""))
            continue
        why = next(("cut off" if e["kind"] == "unclosed_block" else "guessed from prose"
                    for e in errors if path and path in str(e.get("message", ""))), "unsure")
        out.append(f"{said} ✗ {why} → not run")
    return out


def story(path: Path) -> str:
    """`name: the model wrote … → action ✓, action ✗ … → not run` for one example reply."""
    kind = KINDS[path.suffix]
    data = read(path, kind)
    if kind == "symops":
        actions = _symops_actions(data)
    elif kind == "dml":
        actions = [f"{m['name'].replace('_', ' ')} {m['args'][0] if m.get('args') else ''} ✓".replace("  ", " ")
                   for m in data.get("macros") or [] if m.get("command") == "T"]
    else:
        value = data.get("value")
        actions = [f"decision read ✓ (next: {value.get('next_step', '?')})" if isinstance(value, dict)
                   else "✗ not read"]
    return f"{path.name}: the model wrote {_before(kind, data)} → {', '.join(actions) or 'no action'}"


def example_files(examples: Path) -> list[Path]:
    return sorted(p for p in examples.glob("*.*") if p.suffix in KINDS) if examples.is_dir() else []
