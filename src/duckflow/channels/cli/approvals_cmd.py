"""`duckflow approvals [list|show JOB|grant JOB|deny JOB]`: answer the gate's approval jobs."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from duckflow.channels.cli.common import ago, print_json, who

if TYPE_CHECKING:
    from duckflow.gate import Gate, Job


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", default="list", choices=["list", "show", "grant", "deny"],
                        help="list pending jobs (default), show one, grant or deny one")
    parser.add_argument("job", nargs="?", help="job id or a unique prefix of it (4+ characters)")
    parser.add_argument("--note", help="a note kept with the decision (e.g. why it was denied)")
    parser.add_argument("--by", help="who decides (default: cli:$USER)")
    parser.add_argument("--all", action="store_true", help="list: recent jobs of every status")
    parser.add_argument("--limit", type=int, default=20, help="list --all: how many (default 20)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _said(job: Job) -> str:
    """The change in words (`Create hello.py — 6 lines`), as the chat's approval card says it."""
    from duckflow.channels.actionwords import headline, scrub

    said = headline(job.to_dict()["request"])
    summary = (job.request.summary or "").splitlines()[0] if job.request.summary else ""
    written = summary and scrub(summary) == summary and summary.lower() != said.lower()  # by a person, not the engine
    return f"{said} — {summary}" if written else said


def _line(job: Job) -> str:
    r = job.request
    first = _said(job)
    who = f", from {r.requested_by}" if r.requested_by else ""
    status = "" if job.status == "pending" else f"{job.status:<13} "
    hard = " [person must decide]" if r.hard_required and job.status == "pending" else ""
    return f"  {job.job_id[:8]}  {status}{r.risk:<6} {first}  ({ago(r.created_at)}{who}){hard}"


def _list(gate: Gate, args: argparse.Namespace) -> int:
    jobs = gate.history(limit=args.limit) if args.all else gate.pending()
    if args.json:
        print_json({"pending": sum(1 for j in jobs if j.status == "pending"),
                "jobs": [j.to_dict() for j in jobs]})
        return 0
    if args.all:
        if not jobs:
            print("No approval jobs yet.")
            return 0
        print(f"{len(jobs)} recent approval job(s), newest first:")
        for j in jobs:
            print(_line(j))
        return 0
    if not jobs:
        print("No pending approvals. See past decisions with `duckflow approvals list --all`.")
        return 0
    print(f"{len(jobs)} pending approval{'s' if len(jobs) != 1 else ''}:")
    for j in jobs:
        print(_line(j))
    short = jobs[0].job_id[:8]
    print(f"Details with `duckflow approvals show {short}`; grant with `duckflow approvals grant {short}`; "
          f"deny with `duckflow approvals deny {short} --note WHY`.")
    return 0


def _show(gate: Gate, args: argparse.Namespace) -> int:
    job = gate.get(args.job)
    if args.json:
        print_json(job.to_dict())
        return 0
    from duckflow.channels.actionwords import card, card_text

    request = job.to_dict()["request"]
    parts = card(request, None, job.job_id)
    parts["points"] += [("Files", ", ".join(job.request.affected) or "-"),
                        ("Undo", job.request.rollback or "not undoable")]
    print(card_text(parts, diff_lines=400))
    print()
    if job.decision is None:
        short = job.job_id[:8]
        print(f"Status: pending ({ago(job.request.created_at)}). "
              f"Grant with `duckflow approvals grant {short}` or deny with "
              f"`duckflow approvals deny {short} --note WHY`.")
    else:
        d = job.decision
        note = f" — {d.note}" if d.note else ""
        print(f"Status: {d.status} by {d.by}, {ago(d.at)}{note}.")
    return 0


def _changed_since_asked(job: Job) -> str | None:
    """Why the granted job would not run as shown (gate/binding.py), or None."""
    from pathlib import Path

    from duckflow.gate.binding import WORKSPACE_KEY, stale
    from duckflow.workspace.guard import WorkspaceGuard

    extra = job.request.operation.extra
    where = extra.get(WORKSPACE_KEY)
    if not isinstance(where, str) or not Path(where).is_dir():
        return None
    try:
        found = stale(Path(where), WorkspaceGuard(where), extra)
    except Exception:  # noqa: BLE001 - a note only; the check that counts runs before the call
        return None
    return found[1].split(";")[0] if found else None


def _decide(gate: Gate, args: argparse.Namespace, granted: bool) -> int:
    decision = gate.decide(args.job, granted, who(args.by), args.note)
    if args.json:
        print_json(decision.to_dict())
        return 0
    job = gate.get(decision.job_id)
    verb = "Granted" if granted else "Denied"
    print(f"{verb} {decision.job_id[:8]}: {_said(job)} (by {decision.by}).")
    changed = _changed_since_asked(job) if granted else None
    if changed:
        print(f"note: {changed}; it will not run as it is — the task asks again when it resumes.")
    left = len(gate.pending())
    if left:
        print(f"{left} more pending: `duckflow approvals list`.")
    return 0


def run(args: argparse.Namespace) -> int:
    from duckflow.errors import DuckflowError
    from duckflow.gate import Gate

    if args.action in ("show", "grant", "deny") and not args.job:
        raise DuckflowError(f"`duckflow approvals {args.action}` needs a job id.",
                            hint="find it with `duckflow approvals list`")
    with Gate.from_config() as gate:
        if args.action == "list":
            return _list(gate, args)
        if args.action == "show":
            return _show(gate, args)
        return _decide(gate, args, granted=args.action == "grant")
