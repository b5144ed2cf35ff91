"""`duckflow bench exercism [--exercises DIR] [--limit N] [--systems duckflow,aider] [--json]`: aider's own benchmark, side by side.

Exercism's Python practice exercises are the set behind aider's code-editing benchmark. Each
system gets the same prompt (`_exercism.first_prompt`), works in a fresh copy of the stub and the
test file, and is judged by the exercise's own tests as shipped (restored first). A failing
attempt gets one more with the first 50 lines of the test output (`retry_prompt`), as aider's
benchmark does: pass@1 and pass@2.

- **duckflow**: what `duckflow run --auto-approve-workspace "PROMPT"` does, in this process
  (the front door, `channels.cli.routed.CliConversation`; the second attempt is a new run in the
  same workspace, the instructions followed by the test output), with the model wrapped by `_tasktime.Recorder` (temperature 0, seed 0)
  so the time inside model calls, calls and tokens are counted; its ending kind is the one
  `duckflow run --json` prints.
- **aider**: `aider --edit-format whole --auto-test --test-cmd "python -m unittest -q SLUG_test"
  --yes-always --no-git` against `python -m llama_cpp.server` serving the same GGUF (with the
  threads and OpenMP wait policy Duckflow uses; the second attempt restores aider's chat
  history). Aider is never a dependency: it is found on PATH or given with `--aider EXE` (its
  own virtual environment); without it the row says "skipped". Its tokens are the ones it prints.

Exercises alternate which system goes first. Every task's load average is kept; the report
prints pass@1, pass@2, median seconds per task, tokens in / out, calls per task, Duckflow's
share of the wall time (outside model calls) and each ending kind against the real result.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from benchmarks._exercism import (
    Attempt,
    Exercise,
    ExerciseError,
    Run,
    first_prompt,
    fresh_copy,
    judge,
    load_exercises,
    report,
    retry_prompt,
    summarize,
    test_command,
)
from benchmarks._ratio import machine

SHARED = Path(__file__).resolve().parents[2] / "shared" / "exercism"  # beside the repository, where the team keeps it
TRIES = 2
TASK_TIMEOUT_S = 600.0


def ending_kind(data: dict[str, Any]) -> str:
    """The ending `duckflow run --json` reports: its kind (done | not_done | not_verified, in
    `result`) where the run came to one, else how it stopped (`ending`: max_turns, input, …)."""
    result = data.get("result")
    if isinstance(result, dict) and isinstance(result.get("kind"), str) and result["kind"]:
        return str(result["kind"])
    return str(data.get("ending") or "")


async def duckflow_run(ex: Exercise, ws: Path, home: Path, model: Any, model_name: str, *,
                       tries: int = TRIES, timeout_s: float = TASK_TIMEOUT_S, mode: str | None = None) -> Run:
    """Up to `tries` attempts of Duckflow on one exercise (the second with the test output)."""
    from benchmarks._tasktime import Recorder
    from duckflow.channels.cli.routed import CliConversation
    from duckflow.channels.cli.run_cmd import _outcome_json
    from duckflow.companion.factory import open_session
    from duckflow.companion.store import SessionStore
    from duckflow.companion.task import outcome_of
    from duckflow.config import Config
    from duckflow.gate import Gate

    cfg = Config()
    cfg.trace.enabled = False
    rec = Recorder(model)
    run = Run("duckflow", ex.slug)
    message = first_prompt(ex)
    for attempt in range(tries):
        # each attempt is one `duckflow run` in the workspace; the second gets the instructions again
        # with the test output after them (aider keeps them in its chat history)
        opened = open_session(ws, model=rec, model_name=model_name, config=cfg,
                              store=SessionStore(home / f"s{attempt}.db"), gate=Gate(home / f"g{attempt}.db"), mode=mode)
        talk = CliConversation(opened, config=cfg)
        seen = len(rec.times)
        note = ""
        started = time.perf_counter()
        try:
            outcome = await asyncio.wait_for(
                outcome_of(talk.stream(message, None, auto_approve_workspace=True)), timeout_s)
            ending = ending_kind(_outcome_json(outcome, opened))
        except asyncio.TimeoutError:
            ending, note = "timeout", f"no ending within {timeout_s:.0f} s"
        except Exception as exc:  # noqa: BLE001 - a failed run is a failed attempt, the reason kept
            ending, note = "error", f"{type(exc).__name__}: {exc}"[:200]
        finally:
            talk.close()
            opened.close()
        seconds = time.perf_counter() - started
        passed, output = judge(ex, ws)
        calls = rec.times[seen:]
        run.attempts.append(Attempt(passed, round(seconds, 2), ending, sum(c.prompt_tokens for c in calls),
                                    sum(c.generated for c in calls), round(sum(c.wall_ms for c in calls) / 1000, 2),
                                    len(calls), note, sum(c.evaluated for c in calls),
                                    [[c.prompt_tokens, c.evaluated, c.generated, round(c.wall_ms / 1000, 1)]
                                     for c in calls]))
        if passed:
            break
        message = first_prompt(ex) + "\n" + retry_prompt(ex, output)
    return run


TOKENS = re.compile(r"Tokens:\s*([\d.]+)(k?) sent,\s*([\d.]+)(k?) received")


def aider_tokens(output: str) -> tuple[int, int]:
    """(sent, received) summed over aider's "Tokens: 1.2k sent, 300 received." lines."""
    sent = received = 0
    for m in TOKENS.finditer(output):
        sent += int(float(m.group(1)) * (1000 if m.group(2) else 1))
        received += int(float(m.group(3)) * (1000 if m.group(4) else 1))
    return sent, received


def aider_argv(exe: str, base_url: str, ex: Exercise, message: str, restore: bool) -> list[str]:
    return [exe, "--model", "openai/local", "--openai-api-base", base_url, "--openai-api-key", "local",
            "--edit-format", "whole", "--auto-test", "--test-cmd", " ".join(test_command(ex)),
            "--yes-always", "--no-git", "--no-show-model-warnings", "--no-check-update", "--no-analytics",
            "--no-pretty", "--no-fancy-input", "--map-tokens", "0",
            *(["--restore-chat-history"] if restore else []), "--message", message, *ex.solution]


def aider_run(exe: str, base_url: str, ex: Exercise, ws: Path, *, tries: int = TRIES,
              timeout_s: float = TASK_TIMEOUT_S) -> Run:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "AIDER_ANALYTICS": "false"}
    run = Run("aider", ex.slug)
    message = first_prompt(ex)
    for i in range(tries):
        started = time.perf_counter()
        note = ""
        try:
            done = subprocess.run(aider_argv(exe, base_url, ex, message, i > 0), cwd=ws, env=env, text=True,
                                  capture_output=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
            out = done.stdout + done.stderr
            if done.returncode:
                note = f"aider exited {done.returncode}: {out.strip().splitlines()[-1:]}"
        except subprocess.TimeoutExpired as exc:
            raw = exc.stdout or b""  # bytes even with text=True (subprocess.TimeoutExpired)
            out = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
            note = f"no ending within {timeout_s:.0f} s"
        seconds = time.perf_counter() - started
        passed, output = judge(ex, ws)
        sent, received = aider_tokens(out)
        run.attempts.append(Attempt(passed, round(seconds, 2), "", sent, received, 0.0, 0, note))
        if passed:
            break
        message = retry_prompt(ex, output)
    return run


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(gguf: Path, threads: int, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """`python -m llama_cpp.server` with the GGUF on 127.0.0.1 (Duckflow's threads and OpenMP wait policy)."""
    from duckflow.llm.local import batch_threads, quiet_openmp

    port = free_port()
    with log.open("wb") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
                                 "--port", str(port), "--n_ctx", "8192", "--n_threads", str(threads),
                                 "--n_threads_batch", str(max(threads, batch_threads())),
                                 "--model_alias", "local"], stdout=sink, stderr=subprocess.STDOUT,
                                env=quiet_openmp(dict(os.environ)))
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            urllib.request.urlopen(f"{base}/models", timeout=2)
            return proc, base
        except OSError:
            time.sleep(0.5)
    proc.kill()
    proc.wait()
    raise RuntimeError(f"llama_cpp.server did not start: {log.read_text(errors='replace')[-300:]}")


def find_aider(given: str) -> str | None:
    if given:
        return given if Path(given).is_file() or shutil.which(given) else None
    beside = Path(__file__).resolve().parents[2] / "aider-venv" / "bin" / "aider"  # a venv next to the checkout
    return shutil.which("aider") or (str(beside) if beside.is_file() else None)


async def bench(exercises: list[Exercise], systems: list[str], model: Any, model_name: str, *, aider: str | None,
                base_url: str, tries: int = TRIES, timeout_s: float = TASK_TIMEOUT_S, out: Path | None = None,
                say: Any = print, mode: str | None = None) -> dict[str, Any]:
    """Every exercise with every system (alternating which goes first); the report's data."""
    runs: dict[str, list[Run]] = {s: [] for s in systems}
    loads: list[dict[str, Any]] = []
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="duckflow-exercism-") as d:
        tmp = Path(d)
        for i, ex in enumerate(exercises):
            order = systems if i % 2 == 0 else list(reversed(systems))
            for system in order:
                ws = fresh_copy(ex, tmp / system / ex.slug)
                if system == "duckflow":
                    run = await duckflow_run(ex, ws, tmp / "home" / ex.slug, model, model_name,
                                             tries=tries, timeout_s=timeout_s, mode=mode)
                else:
                    run = await asyncio.to_thread(aider_run, str(aider), base_url, ex, ws, tries=tries,
                                                  timeout_s=timeout_s)
                runs[system].append(run)
            loads.append({"slug": ex.slug, **machine()})
            say(f"{i + 1}/{len(exercises)} {ex.slug}: " + ", ".join(
                f"{s} {'pass' if any(a.passed for a in runs[s][-1].attempts) else 'fail'} "
                f"({sum(a.seconds for a in runs[s][-1].attempts):.0f} s)" for s in systems))
            result = {"model": model_name, "systems": {s: summarize(rs) for s, rs in runs.items()},
                      "runs": [r.row() for rs in runs.values() for r in rs], "load": loads}
            if out is not None:
                out.write_text(json.dumps(result, indent=1))
    return result


class _Nothing(Exception):
    """No system left to run (aider skipped, Duckflow not asked for)."""


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="duckflow bench exercism")
    parser.add_argument("--exercises", default=str(SHARED), help="exercism/python's practice exercises "
                        "(a clone of the repository or its exercises/practice folder)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N exercises (by name)")
    parser.add_argument("--only", default="", help="these exercises (comma-separated slugs)")
    parser.add_argument("--systems", default="duckflow,aider", help="duckflow, aider or both (default)")
    parser.add_argument("--model", default="local:default", help="an in-process model (default: local:default)")
    parser.add_argument("--aider", default="", help="aider's executable (default: `aider` on PATH, "
                        "else aider-venv/bin/aider beside the checkout)")
    parser.add_argument("--tries", type=int, default=TRIES)
    parser.add_argument("--timeout", type=float, default=TASK_TIMEOUT_S, help="seconds per attempt (default 600)")
    parser.add_argument("--out", default="", help="write the results here after every exercise (JSON)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    if not systems or any(s not in ("duckflow", "aider") for s in systems):
        print("duckflow bench exercism: --systems takes duckflow, aider or both", file=sys.stderr)
        return 2
    try:
        exercises = load_exercises(Path(args.exercises), limit=args.limit,
                                   only=[s for s in args.only.split(",") if s] or None)
    except ExerciseError as exc:
        print(f"duckflow bench exercism: {exc}", file=sys.stderr)
        return 2
    skipped: dict[str, str] = {}
    aider = find_aider(args.aider) if "aider" in systems else None
    if "aider" in systems and aider is None:
        skipped["aider"] = "skipped: aider not found (install aider-chat in its own venv; --aider EXE)"
        print(f"duckflow bench exercism: aider {skipped['aider'][9:]}", file=sys.stderr)
        systems.remove("aider")
    from duckflow.companion.models import load_model
    from duckflow.config import Config
    from duckflow.errors import DuckflowError

    server = None
    inner: Any = None
    result: dict[str, Any] = {"model": args.model, "systems": {}, "runs": [], "load": []}
    try:
        if not systems:
            raise _Nothing
        model: Any = load_model(args.model, Config())
        inner = model
        while getattr(inner, "models", None):
            inner = inner.models[0]
        base_url = ""
        if "aider" in systems:
            if getattr(inner, "provider", "") != "local":
                raise SystemExit("duckflow bench exercism: aider needs an in-process model's GGUF (--model local:NAME)")
            log = Path(tempfile.gettempdir()) / "duckflow-exercism-server.log"
            server, base_url = start_server(inner.info.path, inner.n_threads, log)
        result = asyncio.run(bench(exercises, systems, model, args.model, aider=aider, base_url=base_url,
                                   tries=max(1, args.tries), timeout_s=args.timeout,
                                   out=Path(args.out) if args.out else None,
                                   say=lambda line: print(line, file=sys.stderr, flush=True)))
    except _Nothing:
        pass
    except DuckflowError as exc:
        print(f"duckflow bench exercism: {exc.message}" + (f" ({exc.hint})" if exc.hint else ""), file=sys.stderr)
        return 1
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=10)
    for name, why in skipped.items():
        result["systems"][name] = {"tasks": 0, "skipped": why}
    result.update({"command": "duckflow bench exercism " + " ".join(argv), "machine": machine(),
                   "threads": getattr(inner, "n_threads", None), "tries": args.tries})
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        print(f"{args.model} on {len(exercises)} exercises, load average {result['machine']['load_avg']}")
        print(report(result))
    return 0
