"""`duckflow sessions`: the saved companion sessions, newest first."""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict


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
        print(json.dumps({"sessions": [asdict(r) for r in rows]}, ensure_ascii=False))
        return 0
    if not rows:
        print('no sessions yet: start one with `duckflow chat` or `duckflow run "TASK"`')
        return 0
    for r in rows:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(r.updated_at))
        pending = "  [approval pending]" if r.pending else ""
        print(f"{r.session_id}  {when}  {r.step:<17} {r.status:<19} {r.workspace}{pending}")
        if r.goal:
            print(f"    goal: {r.goal}")
    return 0
