"""`duckflow workspace check PATH --op OP`: what the workspace guard says about a path.

Exit codes: 0 allowed, 3 refused, 4 allowed only with a person's approval.
`duckflow workspace search QUERY` searches the workspace's code index (search_code).
"""

from __future__ import annotations

import argparse
import os

from duckflow.channels.cli.common import add_workspace, print_json

EXIT_ALLOWED, EXIT_REFUSED, EXIT_APPROVAL = 0, 3, 4


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    check = sub.add_parser("check", help="check a path against the guard",
                           description="Check PATH against the workspace guard. Relative paths "
                           "are resolved from the workspace root. Exit 0 allowed, 3 refused, "
                           "4 needs approval.")
    check.add_argument("path", metavar="PATH", help="the path to check (use -- before a path "
                       "that starts with '-')")
    check.add_argument("--op", default="read", choices=["read", "write", "delete", "execute"],
                       help="the operation to check (default: read)")
    add_workspace(check, aliases=("--root",))
    check.add_argument("--json", action="store_true", help="print one JSON object")
    search = sub.add_parser("search", help="search the code (BM25 over an FTS5 index)",
                            description="Search the workspace's code; its index (kept in "
                            "DUCKFLOW_HOME, never in the workspace) is refreshed first (changed "
                            "files only).")
    search.add_argument("query", metavar="QUERY")
    add_workspace(search, aliases=("--root",))
    search.add_argument("--limit", type=int, default=20)
    search.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    if args.action == "search":
        return _search(args)
    from duckflow.config import load_config
    from duckflow.workspace.guard import WorkspaceGuard

    root = args.workspace or os.getcwd()
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
        print_json(out)
    else:
        state = {EXIT_ALLOWED: "allowed", EXIT_REFUSED: "refused",
                 EXIT_APPROVAL: "needs approval"}[code]
        where = f" -> {verdict.resolved}" if verdict.resolved is not None else ""
        print(f"{state} [{verdict.code}]: {verdict.reason}{where}")
    return code


def _search(args: argparse.Namespace) -> int:
    from duckflow.config import load_config
    from duckflow.errors import DuckflowError
    from duckflow.workspace.search import search_code

    root = args.workspace or os.getcwd()
    if not os.path.isdir(root):
        raise DuckflowError(f"{root} is not a folder", hint="pass -w DIR")
    config = load_config(root).workspace
    result = search_code(root, args.query, max(1, args.limit),
                         max_file_bytes=config.search_max_file_bytes)
    if args.json:
        print_json(result)
    else:
        for hit in result["results"]:
            print(f"{hit['location']}: {hit['snippet']}")
        if not result["results"]:
            print("no matches")
    return 0 if result["results"] else 1
