"""`duckflow autoapprove {on,off,status}`: switch scoped, time-limited auto-approve (seed 003 §6.4)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from duckflow.channels.cli.common import print_json, who

if TYPE_CHECKING:
    from duckflow.gate import ActiveScope, Gate


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["on", "off", "status"],
                        help="on: start a scope with a TTL; off: stop it now; status: show it")
    parser.add_argument("--ttl", type=float, help="minutes until it switches itself off (default: config, 60)")
    parser.add_argument("--paths", nargs="+", metavar="P",
                        help="workspace path prefixes covered (default docs/; * = whole workspace)")
    parser.add_argument("--tools", nargs="+", metavar="T", help="tools or kinds covered (default *)")
    parser.add_argument("--task-types", nargs="+", metavar="X",
                        help="task types covered (default design review; * = any)")
    parser.add_argument("--deny", nargs="*", metavar="OP",
                        help="operations never covered (default delete rename push_public; "
                             "`--deny` alone: none beyond the hard-required ones)")
    parser.add_argument("--max-risk", choices=["low", "medium", "high"],
                        help="highest risk covered (default medium)")
    parser.add_argument("--by", help="who switches it (default: cli:$USER)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _describe(active: ActiveScope, now: float) -> str:
    s = active.scope
    left = max(0.0, (active.expires_at - now) / 60)
    return (f"Auto-approve is ON ({active.label}, {left:.0f} min left, until "
            f"{active.to_dict()['expires_at']}):\n"
            f"  task types: {' '.join(s.task_types) or '(none)'}\n"
            f"  tools:      {' '.join(s.tools) or '(none)'}\n"
            f"  paths:      {' '.join(s.paths) or '(none)'}\n"
            f"  max risk:   {s.max_risk}\n"
            f"  never:      {' '.join(s.deny_operations) or '-'} (and always: hard-required operations)")


def _inside_only(paths: list[str]) -> None:
    """Scope paths are workspace-relative prefixes: one that leaves the workspace could never
    match (outside-workspace operations always wait for a person), so it is refused, not kept."""
    from pathlib import PurePosixPath

    from duckflow.errors import DuckflowError

    for p in paths:
        parts = PurePosixPath(p.replace("\\", "/")).parts
        if p.startswith(("/", "~")) or ".." in parts or (len(p) > 1 and p[1] == ":"):
            raise DuckflowError(f"auto-approve path {p!r} is outside the workspace; scope paths are "
                                "workspace-relative prefixes", hint="e.g. --paths docs/ src/ (or * for the workspace)")


def _on(gate: Gate, args: argparse.Namespace) -> int:
    from dataclasses import replace

    from duckflow.gate import AutoApproveScope

    scope = AutoApproveScope.defaults(gate.policy)
    changes: dict[str, Any] = {}
    if args.paths:
        _inside_only(args.paths)
        changes["paths"] = tuple(args.paths)
    if args.tools:
        changes["tools"] = tuple(args.tools)
    if args.task_types:
        changes["task_types"] = tuple(args.task_types)
    if args.deny is not None:
        changes["deny_operations"] = tuple(args.deny)
    if args.max_risk:
        changes["max_risk"] = args.max_risk
    scope = replace(scope, **changes)
    ttl = args.ttl if args.ttl is not None else gate.policy.auto_approve_ttl_min
    active = gate.autoapprove.on(scope, ttl_min=ttl, by=who(args.by))
    _say_no_sandbox()
    now = gate.clock()
    if args.json:
        print_json({"enabled": True, **active.to_dict(now)})
        return 0
    print(_describe(active, now))
    print("Delete, rename, sensitive sends, public pushes, over-cost and outside-workspace "
          "operations still wait for a person. Switch off at once with `duckflow autoapprove off`.")
    return 0


def _off(gate: Gate, args: argparse.Namespace) -> int:
    n = gate.autoapprove.off(by=who(args.by))
    if args.json:
        print_json({"enabled": False, "switched_off": n})
        return 0
    if n:
        print("Auto-approve is OFF. Every gated operation now waits for a person "
              "(`duckflow approvals list`).")
    else:
        print("Auto-approve was already off; nothing changed.")
    return 0


def _status(gate: Gate, args: argparse.Namespace) -> int:
    now = gate.clock()
    active = gate.autoapprove.active(now)
    if args.json:
        print_json({"enabled": active is not None, **(active.to_dict(now) if active else {}),
                "last": gate.autoapprove.last()})
        return 0
    if active is None:
        last = gate.autoapprove.last()
        why = ""
        if last:
            why = (f" ({last['label']} was switched off by {last['disabled_by']})" if last["disabled_at"]
                   else f" ({last['label']} expired at {last['expires_at']})")
        print(f"Auto-approve is OFF{why}. Every gated operation waits for a person. "
              "Start a scope with `duckflow autoapprove on --ttl 30 --paths docs/`.")
        return 0
    print(_describe(active, now))
    print("Switch off at once with `duckflow autoapprove off`.")
    return 0


def run(args: argparse.Namespace) -> int:
    from duckflow.gate import Gate

    with Gate.from_config() as gate:
        if args.action == "on":
            return _on(gate, args)
        if args.action == "off":
            return _off(gate, args)
        return _status(gate, args)


def _say_no_sandbox() -> None:
    """Once, on stderr: without a sandbox only listed commands are auto-approved."""
    import sys

    from duckflow.config import load_config
    from duckflow.gate.allowlist import no_sandbox_notice

    notice = no_sandbox_notice(load_config().workspace.sandbox)
    if notice:
        print(notice, file=sys.stderr)
