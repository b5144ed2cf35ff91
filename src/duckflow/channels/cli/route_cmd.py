"""`duckflow route "TEXT"`: show where a message would go (seed 003 §2), without running anything.

    duckflow route "fix the bug in app.py" --json
    {"primary_route": "CODE", "source": "rules", "confidence": 1.0, ...}

TEXT `-` reads the message from standard input. The decision is a dry run: no session state
changes and no events are written.
"""

from __future__ import annotations

import argparse
import sys

from duckflow.channels.cli.common import add_workspace, print_json


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("text", nargs="+", help="the message (several words are joined; '-' reads stdin)")
    parser.add_argument("--channel", choices=["cli", "line", "slack", "http"], default="cli",
                        help="the channel the message comes from (default: cli)")
    parser.add_argument("--local-only", action="store_true", help="route as if /local were on for the session")
    parser.add_argument("--previous", default="CHAT", metavar="ROUTE",
                        help="the session's previous route (decides the declaration line)")
    parser.add_argument("--coding", choices=["open", "ended"], default="",
                        help="route as the next message of a coding task under way (open) or just ended")
    parser.add_argument("--json", action="store_true", help="print the RoutingDecision as JSON")
    add_workspace(parser, default=None, help="workspace whose .duckflow/config.toml applies")


def run(args: argparse.Namespace) -> int:
    from duckflow.config import load_config
    from duckflow.orchestra.contracts import InputMessage
    from duckflow.orchestra.router import SessionFlags, build_router

    text = " ".join(args.text)
    if text == "-":
        text = sys.stdin.read()
    config = load_config(args.workspace)
    router = build_router(config)
    flags = SessionFlags(local_only=bool(args.local_only), prev_route=str(args.previous).upper(),
                         coding=args.coding or "")
    msg = InputMessage(channel=args.channel, session_id="route-cli", user_text=text)
    import asyncio

    decision = asyncio.run(router.decide(msg, flags))
    if args.json:
        print_json(decision.public())
        return 0
    out = decision.public()
    evidence = ", ".join(out["evidence"]) or "none"
    print(f"{out['primary_route']}  (source {out['source']}, confidence {out['confidence']:.2f}"
          f"{', local-only' if out['flags']['local_only'] else ''})")
    print(f"  reason:   {out['reason']}")
    print(f"  evidence: {evidence}")
    if decision.declaration:
        print(f"  declares: {decision.declaration}")
    if decision.notice:
        print(f"  notice:   {decision.notice}")
    for note in decision.notes:
        print(f"  note:     {note}")
    return 0
