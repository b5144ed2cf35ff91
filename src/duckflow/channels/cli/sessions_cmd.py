"""`duckflow sessions`: the saved conversations, newest first, named by their first request and time."""

from __future__ import annotations

import argparse
from dataclasses import asdict

from duckflow.channels.cli.common import print_json, when


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--limit", type=int, default=20, help="how many to show (default 20)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--delete", metavar="ID", help="forget one session")


def run(args: argparse.Namespace) -> int:
    from duckflow.companion.store import SessionStore
    from duckflow.errors import DuckflowError

    store = SessionStore()
    try:
        if args.delete:
            if not store.delete(args.delete):
                raise DuckflowError(f"no session '{args.delete}'", hint="see `duckflow sessions`")
            print(f"deleted session {args.delete}")
            return 0
        rows = store.list(args.limit)
    finally:
        store.close()
    if args.json:
        print_json({"sessions": [asdict(r) for r in rows]})
        return 0
    if not rows:
        print('no sessions yet: start one with `duckflow chat` or `duckflow run "TASK"`')
        return 0
    for r in rows:  # named by the first request and the time; the id to pass to --session after it
        name = " ".join((r.task or r.goal or "(no request yet)").split())
        name = name if len(name) <= 60 else name[:59] + "…"
        where = "waiting for your approval" if r.pending else "done" if r.step == "DONE" else "open"
        print(f"{when(r.updated_at)}  “{name}” · {where}")
        print(f"    {r.workspace} · --session {r.session_id}")
    return 0
