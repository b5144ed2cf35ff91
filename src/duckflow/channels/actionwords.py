"""An action in a person's words: its line, what its result adds, its error, and the approval card that asks for it.

`action_text` says one tool call (`Create hello.py (+6 −0)`, `Edit calc.py (+2 −0)`, `Run pytest -q`),
`result_text` what its result adds (`→ exit 0, 15 lines`, `→ 12.0`), `error_text` why it failed;
`card` / `card_text` are the approval card (its headline — `Create hello.py — 6 lines` — the five
points, undo, cost, the diff, a short job id). `scrub` takes engine words (plan ids, `write_file
proposed while planning`) out of a sentence. channels/present.py uses them for the Chunk stream;
commands, chat channels and editors use them for a single action or approval. No I/O.
"""

from __future__ import annotations

import json
import re
from typing import Any

_PLAN_ID = re.compile(r"\bplan[- ]plan-\d{8}-\d+\b( step \d+)?:?\s*|\bplan-\d{8}-\d+\b\s*")
_MACHINE = re.compile(r"\b(\w+) proposed while planning( \(optional\))?")


def scrub(text: str) -> str:
    """Engine words out of a sentence a person reads: plan ids, `write_file proposed while planning`."""
    text = _PLAN_ID.sub("", text)
    text = re.sub(r"\b(create|edit|delete|read|run|test|move) @ ", r"\1 ", text)  # Sym-Ops' `verb @ path`
    text = _MACHINE.sub(lambda m: m.group(1).replace("_", " "), text)
    return " ".join(text.split()) if "\n" not in text else text.strip()


def short_job(job_id: Any) -> str:
    return str(job_id or "")[:8]

def _count(text: str) -> int:
    return len(text.splitlines()) if text else 0


def diff_stats(diff: str) -> tuple[int, int]:
    """(+added, −removed) lines of a unified diff."""
    plus = minus = 0
    for ln in diff.splitlines():
        if ln.startswith("+") and not ln.startswith("+++"):
            plus += 1
        elif ln.startswith("-") and not ln.startswith("---"):
            minus += 1
    return plus, minus


def _edit_stats(content: str) -> tuple[int, int]:
    """(+, −) of SEARCH/REPLACE blocks; a whole-file edit counts its lines as added."""
    if "<<<<<<< SEARCH" not in content:
        return _count(content), 0
    plus = minus = 0
    part = ""
    for ln in content.splitlines():
        if ln.startswith("<<<<<<<"):
            part = "search"
        elif ln.startswith("=======") and part == "search":
            part = "replace"
        elif ln.startswith(">>>>>>>"):
            part = ""
        elif part == "search":
            minus += 1
        elif part == "replace":
            plus += 1
    return plus, minus


def _target(args: dict[str, Any]) -> str:
    return str(args.get("path") or args.get("command") or args.get("query") or args.get("src") or "")


def action_text(name: str, args: dict[str, Any], diff: str = "") -> str:
    """One action in words: `Create hello.py (+6)`, `Edit calc.py (+2 −0)`, `Run pytest -q`."""
    path = str(args.get("path") or "")
    if name in ("write_file", "edit_file"):
        plus, minus = diff_stats(diff) if diff else (
            (_count(str(args.get("content", ""))), 0) if name == "write_file"
            else _edit_stats(str(args.get("content", ""))))
        verb = "Edit" if name == "edit_file" or (diff and not diff.startswith("--- /dev/null")) else "Create"
        return f"{verb} {path} (+{plus} −{minus})"
    if name in ("execute_shell", "run_tests"):
        return f"Run {args.get('command') or 'the tests'}"
    if name == "read_file":
        return f"Read {path}"
    if name == "list_files":
        return f"List {path or '.'}"
    if name == "search_code":
        return f"Search for {args.get('query', '')!r}"
    if name == "delete_path":
        return f"Delete {path}"
    if name == "move_path":
        return f"Move {args.get('src', '')} → {args.get('dst', '')}"
    if name == "create_directory":
        return f"Create folder {path}"
    if name.startswith("mcp__") and name.count("__") >= 2:  # an MCP server's tool (core/mcptools.py)
        _, server, tool = name.split("__", 2)
        return f"Use {tool} of the MCP server {server}"
    return f"{name.replace('_', ' ').capitalize()} {_target(args)}".rstrip()


SHOWN_OUTPUT = 100  # a command's one line of output (or last error line) shown on its action line, cut here


def result_text(name: str, content: str) -> str:
    """What a tool's result adds to its action line: `→ exit 0, 15 lines`, what a command printed
    when it is one short line (`→ 12.0`), the error line of a failed one (`→ exit 1, 4 lines:
    ValueError: …`); '' when nothing."""
    try:
        data = json.loads(content)
    except (ValueError, TypeError):
        data = None
    if name == "read_file" and not isinstance(data, dict):
        n = _count(content)
        return f"→ {n} line{'s' if n != 1 else ''}"
    if not isinstance(data, dict):
        return ""
    if "exit_code" in data:
        if not data.get("ran", True):
            return "→ not run" + (f": {data['advice']}" if data.get("advice") else "")
        if data.get("timed_out"):
            return "→ timed out"
        out = str(data.get("stdout", "")) + str(data.get("stderr", ""))
        said = [ln.strip() for ln in out.splitlines() if ln.strip()]
        if data.get("exit_code") == 0 and len(said) == 1 and len(said[0]) <= SHOWN_OUTPUT:
            return f"→ {said[0]}"  # what it printed, when that is one short line (a sum, a greeting)
        lines = f"{_count(out)} line{'s' if _count(out) != 1 else ''}"
        if data.get("exit_code") != 0 and said:  # and the line that says why it failed
            return f"→ exit {data.get('exit_code')}, {lines}: {said[-1][:SHOWN_OUTPUT]}"
        return f"→ exit {data.get('exit_code')}, {lines}"
    if name == "list_files" and isinstance(data.get("entries"), list):
        n = len(data["entries"])
        return f"→ {n} entr{'ies' if n != 1 else 'y'}"
    if name == "read_file" and isinstance(data.get("content"), str):
        return f"→ {_count(data['content'])} lines"
    if name == "search_code" and isinstance(data.get("matches"), list):
        return f"→ {len(data['matches'])} matches"
    return ""


def error_text(content: str) -> str:
    try:
        data = json.loads(content)
    except (ValueError, TypeError):
        return " ".join(content.split())[:200]
    if isinstance(data, dict):
        msg = data.get("message") or data.get("error") or data.get("reason") or content
        return " ".join(str(msg).split())[:200]
    return " ".join(content.split())[:200]


def headline(request: dict[str, Any], call: dict[str, Any] | None = None) -> str:
    """The approval's first line, a sentence about the change: `Create hello.py — 6 lines`."""
    call = call or {}
    op = request.get("operation") or {}
    name = str(call.get("name") or op.get("tool") or "")
    args = dict(call.get("arguments") or {})
    paths = list(op.get("paths") or request.get("affected") or [])
    if paths and "path" not in args:
        args["path"] = paths[0]
    if op.get("command") and "command" not in args:
        args["command"] = op["command"]
    diff = str(request.get("diff_preview") or "")
    if name in ("write_file", "edit_file") and args.get("path") and not diff and "content" not in args:
        return f"{'Write' if name == 'write_file' else 'Edit'} {args['path']}"  # nothing to count
    if name == "apply_patch" and diff:  # a Coder's patch: the files it edits
        plus, minus = diff_stats(diff)
        return f"Edit {', '.join(str(p) for p in paths) or 'files'} — +{plus} −{minus} lines"
    if name in ("write_file", "edit_file") and args.get("path"):
        plus, minus = diff_stats(diff) if diff else _edit_stats(str(args.get("content", "")))
        if name == "write_file" and (not diff or diff.startswith("--- /dev/null")):
            return f"Create {args['path']} — {plus} line{'s' if plus != 1 else ''}"
        return f"Edit {args['path']} — +{plus} −{minus} lines"
    if name:
        return action_text(name, args)
    intent = scrub(str(request.get("intent") or request.get("summary") or ""))
    return intent[:1].upper() + intent[1:] if intent else "A change needs your approval"


# why a person must decide, in words (the gate's names otherwise, underscores as spaces)
HARD_WORDS = {"cost_over_limit": "the cost estimate is over the limit (gate.cost_limit)",
              "send_sensitive": "it writes or sends secrets", "delete": "it deletes files",
              "rename": "it moves or renames files", "outside_workspace": "it reaches outside the workspace",
              "destructive": "the command deletes, moves or overwrites files", "irreversible": "it cannot be undone",
              "broad_overwrite": "it changes many files at once", "dangerous_extension": "it writes a program file"}
_UNDO_IN_IMPACT = re.compile(r";?\s*(not undoable|undoable with `duckflow undo`)[^;]*")


def undo_point(request: dict[str, Any]) -> str:
    """Whether the change can be undone, and how (every card, the companion's and a Coder's)."""
    how = str(request.get("rollback") or "").replace("`duckflow undo`", "/undo")
    if request.get("reversible") is None and not how:
        return ""
    if request.get("reversible") and not how:
        how = "/undo restores the files as they were"
    return f"{'yes' if request.get('reversible') else 'no'}{' — ' + how if how else ''}"


def card(request: dict[str, Any], call: dict[str, Any] | None, job_id: Any) -> dict[str, Any]:
    """The approval card's parts: headline, the five points in words, undo, the cost, the diff, a short job id."""
    impact = _UNDO_IN_IMPACT.sub("", str(request.get("impact") or "")).strip()  # (said on its own line)
    hard = [str(h) for h in request.get("hard_required") or []]
    cost = request.get("cost_estimate")
    points = [("Why", scrub(str(request.get("rationale") or ""))),
              ("Impact", impact.replace("`duckflow undo`", "/undo")),
              ("Undo", undo_point(request)),
              ("Cost", (f"about ${float(cost):,.2f}" + (" — over the limit" if "cost_over_limit" in hard else ""))
               if isinstance(cost, int | float) else ""),
              ("Instead", str(request.get("alternatives") or "")),
              ("Risk", str(request.get("risk") or "?"))]
    if hard:
        points.append(("A person must decide", "; ".join(HARD_WORDS.get(h, h.replace("_", " ")) for h in hard)))
    return {"headline": headline(request, call), "points": [(k, v) for k, v in points if v],
            "diff": str(request.get("diff_preview") or ""), "job": short_job(job_id),
            "job_id": str(job_id or "")}


def card_text(parts: dict[str, Any], *, diff_lines: int = 40) -> str:
    """The card as plain text (chat channels without their own layout)."""
    lines = [f"{parts['headline']}  (job {parts['job']})"]
    lines += [f"{k}: {v}" for k, v in parts["points"]]
    diff = parts["diff"].splitlines()
    if diff:
        lines += diff[:diff_lines] + ([f"… {len(diff) - diff_lines} more lines"] if len(diff) > diff_lines else [])
    return "\n".join(lines)
