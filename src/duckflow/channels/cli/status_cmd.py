"""`duckflow status`: where a session's task stands, in words (the engine's state with --verbose)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from duckflow.channels.cli.common import add_workspace, ago, print_json


def configure(parser: argparse.ArgumentParser) -> None:
    add_workspace(parser)
    parser.add_argument("--session", help="a session id (default: the workspace's latest)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--verbose", "-v", action="store_true", help="also show the step, vitals, plan and moves")
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
        if not args.json:  # what auto-approve would run code in here, even before a session
            print(f"box for auto-approved code: {_box(path)}")
        where = f"saved session '{args.session}'" if args.session else f"session yet for the workspace {root}"
        raise DuckflowError(f"no {where}", hint='start one with `duckflow chat` or `duckflow run "TASK"`; '
                            "`duckflow sessions` lists the saved ones")
    state, extra = loaded
    transitions: list[dict[str, Any]] = extra.get("transitions", [])
    project = _project(path)
    analyses = _analyses(root)
    box = _box(path)
    if args.json:
        data = state.to_dict()
        data["analyses"] = analyses
        data["transitions"] = transitions[-20:]
        data["project_instructions"] = {"files": list(project.sources), "tokens": project.tokens,
                                        "notes": list(project.notes)} if project is not None else None
        data["box"] = box
        print_json(data)
        return 0
    from duckflow.channels.commands import status_text

    lines = [f"{state.workspace} · updated {ago(state.last_updated)}", status_text(state, busy=False)]
    if state.pending_gate and state.pending_job:
        job = str(state.pending_job.get("job_id", ""))[:8]
        lines.append(f"  answer in `duckflow chat`, or `duckflow approvals grant {job}` (or deny {job})")
    if project is not None:
        lines.append(project.line())
    if analyses:
        a = analyses[0]
        first = (str(a.get("result") or "").strip().splitlines() or [""])[0][:160]
        nxt = "; ".join(a.get("next_actions") or [])[:160]
        lines.append(f"Last analysis ({ago(a['at'])}): {first}" + (f" — next: {nxt}" if nxt else ""))
    if args.verbose or args.debug:
        lines += _engine_lines(state, extra, args.debug)
    lines.append(f"box for auto-approved code: {box}")
    print("\n".join(lines))
    return 0


def _analyses(root: str) -> list[dict[str, Any]]:
    """The workspace's latest ANALYZE results (orchestra/state.py), when there is a store of them."""
    from duckflow.orchestra.state import default_state_path

    if not default_state_path().exists():
        return []
    from duckflow.orchestra.state import OrchestraState

    state = OrchestraState()
    try:
        return state.analyses(root, limit=3)
    finally:
        state.close()


def _project(path: Path) -> Any:
    """The AGENTS.md the companion reads into its prompts here (None when companion.agents_md is off)."""
    from duckflow.config import load_config
    from duckflow.core.instruction_files import agents_files, load_instructions

    comp = load_config(path).companion
    if not comp.agents_md:
        return None
    return load_instructions(agents_files(path), root=path, max_tokens=comp.agents_md_tokens)


def _box(workspace: Path) -> str:
    """Which box auto-approved code runs in here (workspace/box.py), in one line."""
    from duckflow.config import load_config
    from duckflow.errors import DuckflowError
    from duckflow.workspace.box import describe

    try:
        setting = load_config(workspace if workspace.is_dir() else None).workspace.sandbox
    except DuckflowError:  # a broken config is reported by the commands that use it
        setting = "auto"
    return describe(setting)


def _engine_lines(state: Any, extra: dict[str, Any], debug: bool) -> list[str]:
    """What the engine knows (--verbose): session id, step and status, vitals, plan, recent moves."""
    lines = [f"session {state.session_id} · step {state.step.value} · status {state.status.value} · "
             f"{state.conversation_count} exchanges", f"goal: {state.goal or '-'}",
             f"vitals: {state.vitals.line()}", f"last move: {state.last_delta or '-'}"]
    plans = extra.get("plans") or {}
    if state.plan_id and state.plan_id in plans:
        p = plans[state.plan_id]
        specs = p.get("action_specs") or []
        done = sum(1 for a in specs if a.get("state") == "done")
        lines.append(f"plan {state.plan_id}: {p.get('status', '?')} · {done}/{len(specs)} actions done")
        lines += [f"  {i}. [{a.get('state', 'pending')}] {a.get('kind')} {a.get('path')}"
                  for i, a in enumerate(specs, 1)]
    transitions: list[dict[str, Any]] = extra.get("transitions", [])
    for t in [t for t in transitions if t.get("allowed") or debug][-5:]:
        mark = "" if t.get("allowed") else " REFUSED"
        lines.append(f"  {t['from']} → {t['to']} [{t['source']}{mark}] {t['reason']}")
    if state.notes:
        lines.append("notes: " + " | ".join(state.notes[-3:]))
    return lines
