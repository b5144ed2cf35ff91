"""`duckflow events`: the orchestration event log (seed 003 §7), filtered by session and type.

    duckflow events                          # the last 50 events
    duckflow events --session S --type loop.stop
    duckflow events --type 'approval.*' --json
"""

from __future__ import annotations

import argparse

from duckflow.channels.cli.common import print_json


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--session", default=None, help="only this session id")
    parser.add_argument("--type", default=None, help="only this event type (a trailing * matches a prefix)")
    parser.add_argument("--limit", type=int, default=50, help="the last N events (default 50; 0 = all)")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")


def run(args: argparse.Namespace) -> int:
    from duckflow.config import load_config
    from duckflow.errors import DuckflowError
    from duckflow.orchestra.events import EVENT_TYPES, EventLog

    if args.type and not args.type.endswith("*") and args.type not in EVENT_TYPES:
        raise DuckflowError(f"unknown event type {args.type!r}", hint="one of: " + ", ".join(EVENT_TYPES))
    log = EventLog.from_settings(load_config().routing)
    events = list(log.read(session=args.session, type=args.type))
    if args.limit:
        events = events[-args.limit:]
    if args.json:
        for e in events:
            print_json(e)
        return 0
    if not events:
        print(f"no events{' for session ' + args.session if args.session else ''} in {log.path}")
        return 0
    for e in events:
        keys = ("initial_route", "final_route", "stop_reason", "error_reason", "job_id", "approval_status",
                "primary_route", "source")
        detail = " ".join(f"{k}={e[k]}" for k in keys if e.get(k) not in (None, ""))
        print(f"{e.get('ts', '')}  {e.get('type', ''):<22} {e.get('session_id', '')}  {detail}")
    return 0
