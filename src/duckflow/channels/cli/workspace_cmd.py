"""`duckflow workspace check PATH --op OP`: what the workspace guard says about a path.

Exit codes: 0 allowed, 3 refused, 4 allowed only with a person's approval.
"""

from __future__ import annotations

import argparse
import json
import os

EXIT_ALLOWED, EXIT_REFUSED, EXIT_APPROVAL = 0, 3, 4


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    check = sub.add_parser("check", help="check a path against the guard",
                           description="Check PATH against the workspace guard. Relative paths "
                           "are resolved from the workspace root. Exit 0 allowed, 3 refused, "
                           "4 needs approval.")
    check.add_argument("path", metavar="PATH", help="the path to check (use -- before a path "
                       "that starts with '-')")
    check.add_argument("--op", required=True, choices=["read", "write", "delete", "execute"])
    check.add_argument("--root", default=None, help="the workspace root (default: the current "
                       "folder)")
    check.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    from duckflow.config import load_config
    from duckflow.workspace.guard import WorkspaceGuard

    root = args.root or os.getcwd()
    config = load_config(root if os.path.isdir(root) else None).workspace
    guard = WorkspaceGuard(root, config)
    verdict = guard.check(args.path, args.op)
    if not verdict.allowed:
        code = EXIT_REFUSED
    elif verdict.needs_approval:
        code = EXIT_APPROVAL
    else:
        code = EXIT_ALLOWED
    if args.json:
        out = verdict.to_dict()
        out.update({"path": args.path, "op": args.op, "root": str(guard.root)})
        print(json.dumps(out, ensure_ascii=False))
    else:
        state = {EXIT_ALLOWED: "allowed", EXIT_REFUSED: "refused",
                 EXIT_APPROVAL: "needs approval"}[code]
        where = f" -> {verdict.resolved}" if verdict.resolved is not None else ""
        print(f"{state} [{verdict.code}]: {verdict.reason}{where}")
    return code
