"""Validator: checks what a parse found and decides which actions may run.

An action stays `executable` only when it was declared explicitly, its block (if any) was
closed, its type's required parts are there (a target; content for create/edit) and its edit
hunks are complete. Everything it rejects becomes a named `Issue` that the SelfCorrector can
send back to the model.
"""

from __future__ import annotations

from duckflow.protocols.editblocks import parse_hunks
from duckflow.protocols.symops.model import (
    CANONICAL_TYPES,
    CONTENT_OPTIONAL,
    TOOL_ALIASES,
    WORKSPACE_TOOLS,
    Action,
    Issue,
    Repair,
    SymOpsResult,
)

GUESS_MESSAGES = {
    "truncated_block": ("unclosed_block", "the content block is cut off by the end of the reply",
                        "a closing `--` line after the content"),
    "missing_action_symbol": ("undeclared_action", "an action written without `$`",
                              "`$ verb @ path` for every action"),
    "missing_block_close": ("unclosed_block", "the block has no closing fence before the next action",
                            "a line `--` closing the block before the next `$` line"),
    "mismatched_block_close": ("mismatched_block", "the block is closed by a different fence than it was opened with",
                               "the same fence (`--`) to open and close a block"),
    "ambiguous_block_close": ("ambiguous_block", "a content line `--` ends the block early; the rest was joined as a guess",
                              "a longer fence such as `---` when the content has a line `--`"),
    "orphan_block": ("undeclared_action", "a code block with no `$` action line before it",
                     "`$ create @ path` (or edit) on the line right before the block"),
    "prose_mention": ("undeclared_action", "an action only mentioned in prose",
                      "`$ verb @ path` lines for the actions you mean"),
}  # fmt: skip


def _looks_like_diff(content: str) -> bool:
    head = content[:2000]
    return ("\n@@ " in head or head.startswith("@@ ")) and ("--- " in head or "+++ " in head)


def attach_hunks(action: Action) -> None:
    """Fill `action.hunks` for edit content written as SEARCH/REPLACE hunks."""
    c = action.content
    if action.type != "edit" or action.hunks is not None or not c or "<<<<<" not in c:
        return
    if c[:15] == "<<<<<<< SEARCH\n" and c.count("<<<<<") == 1 and c.count("=====") == 1 and c.count(">>>>>") == 1:
        # the common case, one canonical hunk: no other line can be a marker (each marker run
        # occurs once), so this is exactly what parse_hunks returns, without its regex pass
        i = c.find("\n=======\n", 14)
        j = c.find("\n>>>>>>> REPLACE", i + 8) if i >= 0 else -1
        if j >= 0 and c[j + 16 : j + 17] in ("", "\n"):
            action.hunks = [{"search": c[15 : i + 1], "replace": c[i + 9 : j + 1]}]
            return
    hunks = parse_hunks(c)
    if hunks is None:
        return
    action.hunks = [{"search": h.search, "replace": h.replace} for h in hunks]
    if not all(h.complete for h in hunks):
        action.hunks = [
            {"search": h.search, "replace": h.replace} for h in hunks if h.complete
        ]
        action.guess = action.guess or "incomplete_hunk"


def check_action(action: Action) -> list[Issue]:
    """Issues that stop `action` from running (its `executable` is cleared when there are any)."""
    out: list[Issue] = []
    line = action.line
    if action.guess is not None:
        kind, message, expected = GUESS_MESSAGES.get(
            action.guess,
            (action.guess, "the action was guessed", "an explicit `$ verb @ path` action"),
        )
        if action.guess == "incomplete_hunk":
            kind, message = "incomplete_hunk", "a SEARCH/REPLACE hunk is cut off"
            expected = "`>>>>>>> REPLACE` closing every hunk"
        out.append(Issue(kind, line, f"{message} ({action.verb} @ {action.path})", expected))
    if action.type in ("create", "edit") and action.content is None:
        out.append(Issue("missing_content", line, f"`{action.verb} @ {action.path}` has no content block",
                         "the content between two `--` lines right after the action"))  # fmt: skip
    if action.type == "edit" and action.hunks is None and _looks_like_diff(action.content or ""):
        out.append(Issue("unsupported_diff", line, f"`{action.verb} @ {action.path}` holds a unified diff",
                         "the whole new file, or SEARCH/REPLACE hunks"))  # fmt: skip
    if not action.path and not (action.type == "run" and action.content) and action.type != "test":
        out.append(Issue("missing_target", line, f"`{action.verb}` has no target",
                         "`$ verb @ path` (or the command for run)"))  # fmt: skip
    if out:
        action.executable = False
    return out


def plainly_valid(action: Action) -> bool:
    """The common case, decided fast: a declared canonical action with all it needs."""
    p = action.path
    typ = action.type
    return bool(
        action.guess is None and (p or typ == "test") and (not p or (p[0] != "/" and ".." not in p))
        and typ in CANONICAL_TYPES
        and (action.content is not None or typ in CONTENT_OPTIONAL)
        and (typ != "edit" or action.hunks is not None or "\n@@" not in (action.content or ""))
    )  # fmt: skip


def validate(result: SymOpsResult) -> None:
    """Check every action in place; add issues and warnings to `result`."""
    for action in result.actions:
        if action.type == "edit":
            attach_hunks(action)
        if plainly_valid(action):
            continue  # nothing to check further
        result.issues.extend(check_action(action))
        if action.type not in CANONICAL_TYPES:
            known = action.type in WORKSPACE_TOOLS or action.type in TOOL_ALIASES
            if not known:
                action.executable = False
            result.warnings.append(Repair(
                "unknown_action_type", action.line,
                f"`{action.verb}` is passed on as a tool name" + ("" if known else " (runs only where such a tool exists)"),
            ))  # fmt: skip
        p = action.path or ""
        if action.type not in ("run",) and (p.startswith("/") or "/../" in f"/{p}/"):
            result.warnings.append(Repair("path_outside_workspace", action.line, p))
    for key, value in list(result.vitals.items()):
        if not 0.0 <= value <= 1.0:
            result.warnings.append(Repair("vital_out_of_range", 0, f"{key}={value}"))
