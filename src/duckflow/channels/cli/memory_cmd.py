"""`duckflow memory [list|forget TEXT|forget --all] [-w DIR]`: the companion's long-term memory of a workspace.

The memory outlives sessions (`chat --new` starts from it): operation counts, files created,
learned patterns (`/remember`), settings (`/set`) and one line per past session. `forget TEXT`
drops the patterns and past-session lines containing TEXT and the setting named TEXT;
`forget --all` clears the workspace's memory.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from duckflow.channels.cli.common import add_workspace, print_json


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", default="list", choices=["list", "forget"],
                        help="list (default) or forget")
    parser.add_argument("text", nargs="?", help="forget: the pattern, setting name or session text to drop")
    add_workspace(parser)
    parser.add_argument("--all", action="store_true", help="forget: clear this workspace's memory")
    parser.add_argument("--json", action="store_true", help="list: print JSON")


def run(args: argparse.Namespace) -> int:
    from duckflow.companion.state import LongTermMemory
    from duckflow.companion.store import SessionStore
    from duckflow.errors import DuckflowError

    root = str(Path(args.workspace).expanduser().resolve())
    store = SessionStore()
    try:
        data = store.load_memory(root)
        if args.action == "list":
            if args.json:
                print_json({"workspace": root, "memory": data})
                return 0
            if not data:
                print(f"no long-term memory for {root} yet (it grows as `duckflow chat` / `run` work there)")
                return 0
            m = LongTermMemory.from_dict(data)
            print(f"long-term memory of {root}")
            print(f"  operations: {m.successful_operations} successful, {m.failed_operations} failed · "
                  f"files created: {len(m.files_created)}" + (f" ({', '.join(m.files_created[-5:])})"
                                                               if m.files_created else ""))
            for i, p in enumerate(m.learned_patterns, 1):
                print(f"  learned {i}: {p}")
            for k, v in m.user_settings.items():
                print(f"  setting {k} = {v}")
            for p in m.past_sessions:
                print(f"  past session {p}")
            print("forget an item: duckflow memory forget TEXT -w DIR  (or --all)")
            return 0
        if not data:
            print(f"nothing to forget: no memory for {root}")
            return 0
        if args.all:
            store.save_memory(root, LongTermMemory().to_dict())
            print(f"forgot everything remembered for {root}")
            return 0
        if not args.text:
            raise DuckflowError("forget what?", hint="duckflow memory forget TEXT -w DIR, or --all")
        m = LongTermMemory.from_dict(data)
        text = args.text
        gone = [p for p in m.learned_patterns if text in p] + [p for p in m.past_sessions if text in p]
        gone += [f"setting {k}" for k in m.user_settings if k == text]
        if not gone:
            raise DuckflowError(f"nothing in the memory of {root} matches '{text}'",
                                hint="see `duckflow memory -w DIR`")
        m.learned_patterns = [p for p in m.learned_patterns if text not in p]
        m.past_sessions = [p for p in m.past_sessions if text not in p]
        m.user_settings = {k: v for k, v in m.user_settings.items() if k != text}
        store.save_memory(root, m.to_dict())
        for g in gone:
            print(f"forgot: {g}")
        return 0
    finally:
        store.close()
