"""`duckflow status`: the state of a companion session (latest of the workspace by default)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from duckflow.channels.cli.common import add_workspace, ago, print_json


def configure(parser: argparse.ArgumentParser) -> None:
    add_workspace(parser)
    parser.add_argument("--session", help="a session id (default: the workspace's latest)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--debug", action="store_true", help="also list refused transitions")


def run(args: argparse.Namespace) -> int:
    from duckflow.companion.store import SessionStore
    from duckflow.errors import DuckflowError

    path = Path(args.workspace).expanduser().resolve()
    if not args.session and not path.is_dir():
        raise DuckflowError(f"workspace {path} does not exist",
                            hint="pass an existing folder with -w DIR, or see `duckflow sessions`")
    store = SessionStore()
    try:
        root = str(path)
        sid = args.session or store.latest(root)
        loaded = store.load(sid) if sid else None
    finally:
        store.close()
    if loaded is None:
        where = f"saved session '{args.session}'" if args.session else f"session yet for the workspace {root}"
        raise DuckflowError(f"no {where}", hint='start one with `duckflow chat` or `duckflow run "TASK"`; '
                            "`duckflow sessions` lists the saved ones")
    state, extra = loaded
    transitions: list[dict[str, Any]] = extra.get("transitions", [])
    if args.json:
        data = state.to_dict()
        data["transitions"] = transitions[-20:]
        print_json(data)
        return 0
    lines = [
        f"session {state.session_id} · {state.workspace} · updated {ago(state.last_updated)}",
        f"step {state.step.value} · status {state.status.value} · {state.conversation_count} exchanges",
        f"task: {state.task or '-'}",
        f"goal: {state.goal or '-'}",
        f"why now: {state.why_now or '-'}",
        f"constraints: {'; '.join(state.constraints) or '-'}",
        f"plan: {' → '.join(state.plan_brief) or '-'}",
        f"open questions: {'; '.join(state.open_questions) or '-'}",
        f"vitals: {state.vitals.line()}",
    ]
    plans = extra.get("plans") or {}
    if state.plan_id and state.plan_id in plans:
        p = plans[state.plan_id]
        specs = p.get("action_specs") or []
        done = sum(1 for a in specs if a.get("state") == "done")
        lines.append(f"plan {state.plan_id}: {p.get('status', '?')} · {done}/{len(specs)} actions done")
        for i, a in enumerate(specs, 1):
            lines.append(f"  {i}. [{a.get('state', 'pending')}] {a.get('kind')} {a.get('path')}")
    if state.pending_gate and state.pending_job:
        job = state.pending_job
        lines.append(f"waiting for approval: job {job['job_id']} ({job.get('summary', '')})")
        lines.append("  answer in `duckflow chat`, or `duckflow approvals grant|deny JOB`")
    if state.last_delta:
        lines.append(f"last change: {state.last_delta}")
    shown = [t for t in transitions if t.get("allowed") or args.debug][-5:]
    if shown:
        lines.append("recent transitions:")
        for t in shown:
            mark = "" if t.get("allowed") else " REFUSED"
            lines.append(f"  {t['from']} → {t['to']} [{t['source']}{mark}] {t['reason']}")
    if state.notes:
        lines.append("notes: " + " | ".join(state.notes[-3:]))
    print("\n".join(lines))
    return 0
