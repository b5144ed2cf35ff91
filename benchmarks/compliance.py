"""`duckflow bench compliance [--models A,B] [--json]`: how well models follow the protocols, and how fast.

For each task of `_compliance_tasks` (small coding jobs, each checked by running the produced
code in a scratch workspace) and each protocol and loop mode, the figures per stage:

- single-call mode (one reply per step, the prompt and grammar of `companion.singlecall`):
  `raw` (the unconstrained reply read strictly), `+repair` (the codec's named repairs),
  `+fuzzy` (guessed actions found too; guesses are never run), `+self-correction` (one
  re-ask naming the errors; the live loop allows two), `+grammar` (the live path: `duckflow run`'s
  session in single-call mode with the GBNF grammar, driven to its end with auto-approve);
- two-call mode (Main JSON decision + Specialized reply, the live session): `+self-correction`
  (the live pipeline, unconstrained) and `+grammar` (the decision constrained by its schema,
  the Specialized reply by the grammar of its protocol, `companion.replygrammar`).

Both protocols (`--protocols symops,dml`) run every cell: DML's single-call cells use the DML
templates and `dml_grammar`, read by the session's DMLCodec.

Per cell: well-formed share (replies read without repair / fuzzy guesses, per stage), exact
intended actions, check-passing share, runnable guesses (guessed actions that would run: must
be 0), output tokens and seconds. Deterministic: temperature 0 and a fixed seed. The live cells
say where the time went, per model (`--models`, run one after the other) in one report with the
replayed real replies (`_tasktime`, `--recorded`; `--best-of N`: `bench/_bestof.py`).
"""

from __future__ import annotations

import argparse
import asyncio
import fnmatch
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks._compliance_tasks import SETS, Task
from benchmarks._tasktime import (
    Recorder,
    TaskTime,
    checked_of,
    recorded_table,
    report_table,
    summary,
    table,
)
from duckflow.llm.types import Message, ModelSettings, ToolCall
from duckflow.toolkinds import READ_TOOLS

RAW_MAX_TOKENS = 500  # an unconstrained small model often runs on to the bound: keep it affordable
STAGES = ("raw", "+repair", "+fuzzy", "+self-correction", "+grammar")
READ_ONLY = READ_TOOLS


@dataclass
class Cell:
    tasks: int = 0
    well_formed: int = 0
    exact: int = 0
    passed: int = 0
    runnable_guesses: int = 0
    out_tokens: int = 0
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)

    def row(self) -> dict[str, Any]:
        n = max(1, self.tasks)
        return {"tasks": self.tasks, "well_formed": self.well_formed, "well_formed_share": round(self.well_formed / n, 3),
                "exact": self.exact, "exact_share": round(self.exact / n, 3), "passed": self.passed,
                "passed_share": round(self.passed / n, 3), "runnable_guesses": self.runnable_guesses,
                "out_tokens": self.out_tokens, "seconds": round(self.seconds, 1), "failed_tasks": self.failures}


def _target(call: ToolCall) -> str:
    a = call.arguments
    if call.name in ("execute_shell", "run_tests"):
        m = re.search(r"([\w./-]+\.py)\b", str(a.get("command") or a.get("path") or ""))
        return m.group(1) if m else str(a.get("command") or "")
    return str(a.get("path") or "")


def exact_intended(calls: Sequence[ToolCall], task: Task) -> bool:
    """The executable actions are the intended ones (an intended path may be a glob: `*.py`)."""
    got = {("execute_shell" if c.name == "run_tests" else c.name, _target(c)) for c in calls
           if c.name not in READ_ONLY and c.executable}
    want = set(task.intended)
    return len(got) == len(want) and all(any(g[0] == w[0] and fnmatch.fnmatch(g[1], w[1]) for g in got)
                                         for w in want)


def setup(task: Task, root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in task.files.items():
        (root / rel).write_text(text, encoding="utf-8")


def apply_calls(root: Path, calls: Sequence[ToolCall]) -> None:
    """Writes, edits and deletes of executable calls (commands are not run: the check runs the code)."""
    from duckflow.protocols.editblocks import apply_hunks, parse_hunks

    for c in calls:
        if not c.executable:
            continue
        rel = str(c.arguments.get("path") or "")
        target = (root / rel).resolve()
        if not rel or root.resolve() not in target.parents:
            continue
        if c.name == "write_file":
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(str(c.arguments.get("content", "")), encoding="utf-8")
        elif c.name == "edit_file" and target.is_file():
            content = str(c.arguments.get("content", ""))
            hunks = parse_hunks(content)
            if hunks is not None:
                done = apply_hunks(target.read_text(encoding="utf-8"), hunks)
                if done.ok:
                    target.write_text(done.text, encoding="utf-8")
            else:
                target.write_text(content, encoding="utf-8")
        elif c.name == "delete_path" and target.is_file():
            target.unlink()


def check(task: Task, root: Path) -> bool:
    try:
        done = subprocess.run([sys.executable, "-c", task.check], cwd=root, capture_output=True,
                              text=True, timeout=120)  # pytest checks start slowly under load
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


def _levels(decoded: Any) -> dict[str, bool]:
    """Which stages read this decoded reply as usable."""
    executable = [c for c in decoded.calls if c.executable]
    strict = bool(decoded.calls) and not (decoded.repairs or decoded.warnings or decoded.errors)
    return {"raw": strict, "+repair": bool(executable) and not decoded.errors and
            all(c.confidence >= 1.0 for c in decoded.calls), "+fuzzy": bool(decoded.calls)}


def _usable(decoded: Any, stage: str) -> list[ToolCall]:
    ok = _levels(decoded)
    if stage == "raw":
        return list(decoded.calls) if ok["raw"] else []
    return [c for c in decoded.calls if c.executable]


def _guesses(decoded: Any) -> int:
    return sum(1 for c in decoded.calls if c.executable and c.confidence < 1.0)


@dataclass
class Bench:
    model_name: str
    protocols: list[str]
    modes: list[str]
    tasks: list[Task]
    stages: str = "all"  # all | live (only the live-path cells)
    out: Path | None = None  # partial results are written here after every task
    cells: dict[tuple[str, str, str], Cell] = field(default_factory=dict)
    times: dict[tuple[str, str, str], list[TaskTime]] = field(default_factory=dict)
    best_of: int = 1  # >1: the live cells ask for n candidates per step, ranked by bench._bestof

    def cell(self, protocol: str, mode: str, stage: str) -> Cell:
        return self.cells.setdefault((protocol, mode, stage), Cell())

    def open(self, root: Path, home: Path, model: Any, protocol: str, mode: str, constrained: bool) -> Any:
        from duckflow.companion.factory import open_session
        from duckflow.companion.store import SessionStore
        from duckflow.config import Config
        from duckflow.gate import Gate

        cfg = Config()
        cfg.models.constrained_decoding = constrained
        cfg.trace.enabled = False
        return open_session(root, model=model, model_name=self.model_name, config=cfg,
                            store=SessionStore(home / "s.db"), gate=Gate(home / "g.db"),
                            codec=protocol, mode=mode)

    async def single_reply_stages(self, task: Task, protocol: str, model: Any, tmp: Path) -> None:
        """raw, +repair, +fuzzy and +self-correction from one unconstrained reply (and its re-asks)."""
        from duckflow.companion.singlecall import build_step
        from duckflow.core.correction import self_correct
        from duckflow.llm.tokens import count_tokens
        from duckflow.llm.types import complete

        ws = tmp / "prompt"
        setup(task, ws)
        rec = Recorder(model)
        opened = self.open(ws, tmp / "home-p", rec, protocol, "single-call", False)
        try:
            session = opened.session
            session.owner.change("task", lambda s: setattr(s, "task", task.text))
            step = build_step(session, task.text)
            msgs = step.messages
            codec = session.codec
            specs = session.runner.specs
            # the single-call prompt of the session's protocol (Sym-Ops or DML templates)
            settings = ModelSettings(temperature=0.0, max_tokens=RAW_MAX_TOKENS, extra={"seed": 0})
            t0 = time.perf_counter()
            first = (await complete(rec.models[0], msgs, settings=settings)).text
            spent = time.perf_counter() - t0
            tokens = count_tokens(first, model.name).tokens
            decoded = codec.decode(first, specs)
            for stage in ("raw", "+repair", "+fuzzy"):
                self._score(task, protocol, "single-call", stage, decoded, _usable(decoded, stage),
                            _levels(decoded)[stage], tmp / f"ws{stage}", tokens, spent)
            extra = 0

            async def ask(asked: list[Message]) -> str:
                nonlocal extra
                again = (await complete(rec.models[0], asked, settings=settings)).text
                extra += count_tokens(again, model.name).tokens
                return again

            t1 = time.perf_counter()
            fixed = await self_correct(ask, codec, specs, msgs, first, decoded, max_rounds=1)
            spent += time.perf_counter() - t1
            self._score(task, protocol, "single-call", "+self-correction", fixed.decoded,
                        _usable(fixed.decoded, "+fuzzy"), _levels(fixed.decoded)["+fuzzy"],
                        tmp / "ws-sc", tokens + extra, spent)
        finally:
            opened.close()

    def _score(self, task: Task, protocol: str, mode: str, stage: str, decoded: Any, calls: list[ToolCall],
               well_formed: bool, root: Path, tokens: int, seconds: float) -> None:
        cell = self.cell(protocol, mode, stage)
        cell.tasks += 1
        cell.well_formed += int(well_formed)
        cell.exact += int(exact_intended(calls, task))
        cell.runnable_guesses += _guesses(decoded)
        setup(task, root)
        apply_calls(root, calls)
        ok = check(task, root)
        cell.passed += int(ok)
        if not ok:
            cell.failures.append(task.name)
        cell.out_tokens += tokens
        cell.seconds += seconds

    async def live(self, task: Task, protocol: str, mode: str, model: Any, tmp: Path, constrained: bool,
                   stage: str) -> None:
        """The live path: the session (as `duckflow run` opens it) driven to its end."""
        from duckflow.companion.task import drive
        from duckflow.llm.tokens import count_tokens

        ws = tmp / f"live-{mode}-{stage}"
        setup(task, ws)
        from benchmarks._bestof import reply_score
        from duckflow.llm.bestof import BestOfModel

        best = BestOfModel(model, self.best_of, lambda _: 0.0) if self.best_of > 1 else None
        rec = Recorder(best or model)
        opened = self.open(ws, tmp / f"home-{mode}-{stage}", rec, protocol, mode, constrained)
        if best is not None:
            best.score = reply_score(opened.session.codec, opened.session.runner.specs, ws, task.text)
        t0 = time.perf_counter()
        calls: list[ToolCall] = []
        out = None
        try:
            out = await drive(opened.session, opened.session.handle_message(task.text), max_turns=12,
                              auto_approve_workspace=True)
            for res in out.results:
                calls += [o.call for o in res.outcomes if o.status in ("ok", "pending", "error")]
        except Exception as exc:  # a failed run is a failed task, with the reason kept
            self.cell(protocol, mode, stage).failures.append(f"{task.name} ({type(exc).__name__})")
        finally:
            opened.close()
        spent = time.perf_counter() - t0
        cell = self.cell(protocol, mode, stage)
        cell.tasks += 1
        codec = opened.session.codec
        specs = opened.session.runner.specs
        replies = [r for r in rec.replies if r.strip()]
        if mode == "single-call":
            decs = [codec.decode(r, specs) for r in replies]
            cell.well_formed += int(bool(decs) and all(_levels(d)["raw"] or (not d.calls and not d.errors
                                                                               and not d.repairs) for d in decs))
            cell.runnable_guesses += sum(_guesses(d) for d in decs)
        else:
            from duckflow.companion.decision import MainDecision
            from duckflow.protocols.jsonreply import read_json

            good = 0
            for text in replies:
                jr = read_json(text, MainDecision)
                if jr.ok and not jr.repairs:
                    good += 1
                elif not text.lstrip().startswith("{"):
                    d = codec.decode(text, specs)
                    good += int(_levels(d)["raw"])
                    cell.runnable_guesses += _guesses(d)
            cell.well_formed += int(bool(replies) and good == len(replies))
        unique: list[ToolCall] = []
        for c in calls:
            if all(c.name != u.name or c.arguments != u.arguments for u in unique):
                unique.append(c)
        cell.exact += int(exact_intended(unique, task))
        ok = check(task, ws)
        if task.name == "delete" and not ok:  # the gate keeps deletes for a person: a pending delete is right
            ok = any(c.name == "delete_path" and c.arguments.get("path") == "old_notes.txt" for c in calls)
        cell.passed += int(ok)
        if not ok:
            cell.failures.append(task.name)
        cell.out_tokens += sum(count_tokens(r, model.name).tokens for r in rec.replies)
        cell.seconds += spent
        self.times.setdefault((protocol, mode, stage), []).append(TaskTime(
            task.name, ok, round(spent, 2), round(sum(c.wall_ms for c in rec.times) / 1000, 2),
            checked_of(out), rec.times))

    async def run(self, model: Any, say: Any) -> None:
        for i, task in enumerate(self.tasks, 1):
            for protocol in self.protocols:
                with tempfile.TemporaryDirectory(prefix="duckflow-compliance-") as d:
                    tmp = Path(d)
                    if "single-call" in self.modes and self.stages == "all":
                        await self.single_reply_stages(task, protocol, model, tmp)
                    if "single-call" in self.modes:
                        await self.live(task, protocol, "single-call", model, tmp, True, "+grammar")
                    if "two-call" in self.modes:
                        if self.stages == "all":
                            await self.live(task, protocol, "two-call", model, tmp, False, "+self-correction")
                        await self.live(task, protocol, "two-call", model, tmp, True, "+grammar")
            say(f"{i}/{len(self.tasks)} {task.name}: " + ", ".join(
                f"{p}/{m}/{s} {c.passed}/{c.tasks}" for (p, m, s), c in self.cells.items()))
            if self.out is not None:
                self.out.write_text(json.dumps(self.result(), indent=2))

    def result(self) -> dict[str, Any]:
        order = {s: i for i, s in enumerate(STAGES)}
        cells = [{"protocol": p, "mode": m, "stage": s, **c.row()}
                 for (p, m, s), c in sorted(self.cells.items(), key=lambda kv: (kv[0][0], kv[0][1], order[kv[0][2]]))]
        timing = [{"model": self.model_name, "best_of": self.best_of, "protocol": p, "mode": m, "stage": s, "summary": summary(ts),
                   "tasks": [t.row() for t in ts]} for (p, m, s), ts in self.times.items()]
        return {"model": self.model_name, "tasks": [t.name for t in self.tasks], "temperature": 0.0,
                "seed": 0, "cells": cells, "timing": timing, "best_of": self.best_of}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="duckflow bench compliance")
    parser.add_argument("--model", default="", help="one model name (default: local:default)")
    parser.add_argument("--models", default="", help="comma list of models, run one after the other "
                        "(e.g. local:default,local:coder-1.5b)")
    parser.add_argument("--protocols", default="symops", help="comma list: symops,dml")
    parser.add_argument("--modes", default="single-call,two-call", help="comma list: single-call,two-call")
    parser.add_argument("--limit", type=int, default=0, help="only the first N tasks")
    parser.add_argument("--tasks", default="", help="comma list of task names")
    parser.add_argument("--set", choices=sorted(SETS), default="default",
                        help="the task list: default (the 22 tasks) or heldout (tasks the prompts were not tuned on)")
    parser.add_argument("--stages", choices=["all", "live"], default="all",
                        help="live: only the live-path cells (what `duckflow run` does), much faster")
    parser.add_argument("--best-of", type=int, default=1, help="N candidates per step (live cells)")
    parser.add_argument("--recorded", default="tests/corpus/real", help="real replies replayed per stage")
    parser.add_argument("--out", help="write the (partial) results as JSON here after every task")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    from duckflow.companion.models import load_model
    from duckflow.config import Config

    names = [m.strip() for m in (args.models or args.model or "local:default").split(",") if m.strip()]
    tasks = [t for t in SETS[args.set] if not args.tasks or t.name in args.tasks.split(",")][: args.limit or None]
    started = time.perf_counter()

    def say(text: str) -> None:
        print(f"compliance: {text}", file=sys.stderr, flush=True)

    results: list[dict[str, Any]] = []
    for name in names:
        out = (Path(args.out).with_suffix(f".{len(results)}.json") if len(names) > 1 else Path(args.out)) if args.out else None
        bench = Bench(name, [p.strip() for p in args.protocols.split(",") if p.strip()],
                      [m.strip() for m in args.modes.split(",") if m.strip()], tasks, args.stages, out,
                      best_of=args.best_of)
        model = load_model(name, Config())
        asyncio.run(bench.run(model, say))
        info = getattr(getattr(model, "models", [model])[0], "info", None)  # local:default's pick, said
        results.append({**bench.result(), "load_average": [round(x, 1) for x in os.getloadavg()],
                        "resolved": f"{info.label} {info.reason}".strip() if info else name})
        if "duckflow.llm.local" in sys.modules:  # the next model gets the memory and the cores
            sys.modules["duckflow.llm.local"].close_all()
    from benchmarks._protocol_bars import compliance as replayed

    result = {**(results[0] if len(results) == 1 else {"models": results}),
              "report": [row for r in results for row in r["timing"]],
              "recorded": replayed(Path(args.recorded))["compliance"],
              "seconds_total": round(time.perf_counter() - started, 1),
              "command": "duckflow bench compliance " + " ".join(argv)}
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        print(f"{', '.join(names)} · {len(tasks)} tasks · temperature 0, seed 0 · {result['seconds_total']} s\n")
        print(report_table(result["report"]) + "\n")
        print(recorded_table({"compliance": result["recorded"]}) + "\n")
        for r in results:
            print(f"{r['model']} ({r['resolved']}):\n{table(r)}\n")
    return 0

