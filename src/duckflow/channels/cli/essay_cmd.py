"""`duckflow essay draft|style|check|eval|full|auto|reflexion FILE`: the SmartAO essay agents.

Exit codes: 0 done (plagiarism pass or warn), 3 the plagiarism check says block, 1 an error
(named on stderr with the next step), 2 bad usage. The patched essay is written beside the
original (`essay.md` → `essay.draft.md`), never over it unless `--in-place` is given.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from duckflow.channels.cli.common import print_json
from duckflow.errors import DuckflowError

EXIT_BLOCK = 3
EXIT_STOPPED = 130  # the person pressed Ctrl-C
TASKS = ("draft", "style", "check", "eval", "full", "auto", "reflexion")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("task", choices=TASKS, help="what to do; `auto` routes --request to a task")
    parser.add_argument("file", nargs="?", help="the essay (UTF-8 text or Markdown)")
    parser.add_argument("--rubric", help="rubric JSON (default: the bundled AO rubric)")
    parser.add_argument("--refs", help="folder of reference texts for the plagiarism check")
    parser.add_argument("--request", help="with `auto`: what you want, in your words")
    parser.add_argument("--model", "-m", help="provider:model for the agents that need one")
    parser.add_argument("--depth", type=int, choices=(1, 2, 3), default=2, help="how far Draft deepens")
    parser.add_argument("--in-place", action="store_true", help="write the result over FILE")
    parser.add_argument("--db", help="SmartAO database (default: $DUCKFLOW_HOME/smartao.db)")
    parser.add_argument("--warn", type=float, default=None, help="plagiarism warn threshold (default 0.28)")
    parser.add_argument("--block", type=float, default=None, help="plagiarism block threshold (default 0.4)")
    parser.add_argument("--eval-mode", choices=("auto", "steps", "whole"), default="auto",
                        help="eval: small questions per criterion (steps, local models) or one question (whole)")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")


def _read_essay(name: str | None) -> tuple[Path, str]:
    if not name:
        raise DuckflowError("no essay file given", hint="duckflow essay TASK FILE")
    path = Path(name)
    if not path.is_file():
        raise DuckflowError(f"essay not found: {name}", hint="give the path of a text or Markdown file")
    if path.stat().st_size > 2_000_000:
        raise DuckflowError(f"{name} is larger than 2 MB", hint="an essay is expected; split the file")
    try:
        return path, path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DuckflowError(f"{name} is not UTF-8 text (byte {exc.start})", hint="save it as UTF-8") from None


def _model(name: str | None, needed: bool) -> Any:
    if not name and not needed:
        return None
    from duckflow.companion.models import choose_model_name, load_model
    from duckflow.config import load_config

    cfg = load_config()
    return load_model(choose_model_name(name, cfg), cfg)


def _thresholds(args: argparse.Namespace) -> tuple[float, float]:
    from duckflow.apps.smartao.guard import BLOCK_AT, WARN_AT

    warn = WARN_AT if args.warn is None else args.warn
    block = BLOCK_AT if args.block is None else args.block
    if not (0 <= warn <= block <= 1):
        raise DuckflowError(f"thresholds must satisfy 0 <= --warn ({warn}) <= --block ({block}) <= 1")
    return warn, block


def run(args: argparse.Namespace) -> int:
    from duckflow.apps.smartao.store import EssayStore

    if args.task == "reflexion":
        store = EssayStore(args.db)
        report = store.apply_reflexion().to_dict()
        _print(args, report, lambda r: f"reflected on {r['evaluations']} evaluation(s); "
               f"{len(r['lessons'])} lesson(s) written" + "".join(f"\n- {x['lesson']}" for x in r["lessons"]))
        return 0
    return asyncio.run(_essay(args))


async def _essay(args: argparse.Namespace) -> int:
    from duckflow.apps.smartao.coordinator import Coordinator, essay_session
    from duckflow.apps.smartao.refs import load_references
    from duckflow.apps.smartao.store import EssayStore

    path, text = _read_essay(args.file)
    refs = load_references(args.refs) if args.refs else None
    task = args.task
    route = None
    if task == "auto" and not args.request:
        raise DuckflowError("`essay auto` needs --request", hint='e.g. --request "proofread this"')
    explicit_model = args.model
    if task == "auto":
        probe = Coordinator(model=_model(explicit_model, False))
        route = await probe.route(args.request)
        task = route["task"]
    needs_model = task in ("draft", "eval", "full")
    model = _model(explicit_model, needs_model)
    store = EssayStore(args.db) if task in ("draft", "eval", "full") else None
    warn, block = _thresholds(args)
    lang = language(text)
    coordinator = Coordinator(model=model, refs=refs, store=store, depth=args.depth, plagiarism_warn=warn,
                              plagiarism_block=block, on_progress=lambda m: _progress(m, lang),
                              eval_mode=args.eval_mode)
    rubric = args.rubric if task in ("eval", "full") else None
    if task == "full" and rubric is None:
        from duckflow.apps.smartao.rubric import DEFAULT_RUBRIC

        rubric = str(DEFAULT_RUBRIC)
    try:
        report = await coordinator.run(task, text, session=essay_session(path), rubric=rubric, route=route)
    except asyncio.CancelledError:  # Ctrl-C: show what was judged, then stop
        partial = coordinator.evaluator.partial() if coordinator.evaluator is not None else None
        if partial is not None and partial.scores:
            _print(args, {"task": task, "route": {"source": "command"}, "evaluation": partial.to_dict()}, _human)
        done, planned = (partial.judged, partial.planned) if partial is not None else (0, 0)
        print(_words("cli.stopped", lang, k=done, n=planned or "?"), file=sys.stderr)
        return EXIT_STOPPED
    out: dict[str, Any] = report.to_dict()
    if report.patch is not None and report.patch.change_map:
        target = path if args.in_place else path.with_name(f"{path.stem}.{task}{path.suffix or '.txt'}")
        target.write_text(report.patch.new_text, encoding="utf-8")
        out["written"] = str(target)
    for note in report.notices:
        print(f"💬 {note}", file=sys.stderr)
    _print(args, out, _human)
    if report.plagiarism is not None and report.plagiarism.verdict == "block":
        return EXIT_BLOCK
    return 0


def _words(key: str, lang: str, **values: Any) -> str:
    from duckflow.core.prompt_library import PromptLibrary

    return PromptLibrary("duckflow.apps.smartao").get(key, lang, **values)


def language(text: str) -> str:
    from duckflow.apps.smartao.text import language as guess

    return guess(text)


def _progress(message: str, lang: str) -> None:
    print(f"{_words('cli.evaluating', lang)}: {message}", file=sys.stderr, flush=True)


def _print(args: argparse.Namespace, report: dict[str, Any], human: Any) -> None:
    if args.json:
        print_json(report)
    else:
        sys.stdout.write(human(report) + "\n")


def _clip(text: str, width: int) -> str:
    one = " ".join(text.split())
    return one if len(one) <= width else one[: width - 1] + "…"


def _human(r: dict[str, Any]) -> str:
    lang = r.get("language", "en")
    lines = [f"task: {r['task']}" + (f" (routed by {r['route']['source']})" if r["route"].get("source") != "command" else "")]
    if "patch" in r:
        s = r["patch"]["summary"]
        lines.append(_words("cli.patch", lang, n=s["changes"], removed=s["chars_removed"], added=s["chars_added"])
                     + (f", {len(r['patch']['conflicts'])} conflict(s) dropped" if r["patch"]["conflicts"] else ""))
    for kept in (r.get("draft") or {}).get("unchanged", []):
        lines.append(f"  {_words('cli.not_changed', lang)}: {kept['heading']} — {kept['reason']}")
    issues = (r.get("style") or {}).get("issues", [])
    for issue in issues[:20]:
        fix = "" if issue["suggestion"] is None else f" → 「{issue['suggestion']}」"
        where = f"line {issue['line']}, col {issue['col']}" if "line" in issue else f"@{issue['start']}"
        lines.append(f"  {where}: {issue['message']}{fix}   [{issue['rule']}]")
        if issue.get("sentence"):
            lines.append(f"      {_clip(issue['sentence'], 100)}")
    if len(issues) > 20:
        lines.append(f"  … {len(issues) - 20} more (--json lists them all)")
    if "plagiarism" in r:
        p = r["plagiarism"]
        lines.append(f"plagiarism: {p['score']:.2f} → {p['verdict']}")
        for m in p["matches"]:
            lines.append(f"  {m['score']:.2f}  {m['ref']}")
            for ps in m.get("passages", []):
                lines.append(f"      line {ps['line']} (ref line {ps['ref_line']}): >>{_clip(ps['text'], 160)}<<")
    if "evaluation" in r:
        e = r["evaluation"]
        lang = e.get("language", lang)
        n, k = e.get("criteria", len(e["scores"])), e.get("judged", len(e["scores"]))
        lines.append(f"{_words('cli.rubric', lang)}: {e['rubric']} — {_words('cli.total', lang)} {e['total']}/100"
                     + (f" ({_words('cli.judged', lang, k=k, n=n)})" if k < n else "")
                     + (" (cached)" if e["cached"] else ""))
        for s in e["scores"]:
            if s.get("level") is None:
                lines.append(f"  {s['criterion']}: {s['reason']}")
                continue
            lines.append(f"  {s['criterion']}: {s['level']}/{s['max']} — {s['reason']}")
            if s.get("to_next"):
                lines.append(f"      {_words('cli.to_reach', lang, level=s['level'] + 1)}: {s['to_next']}")
    if r.get("written"):
        lines.append(f"{_words('cli.written', lang)}: {r['written']}")
    elif "patch" in r:
        lines.append(_words("cli.no_change", lang))
    return "\n".join(lines)
