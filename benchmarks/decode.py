"""`duckflow bench decode [--model local:default] [--rounds 5] [--tokens 48] [--json]`: the physical floor of a local turn.

In one run, on one prompt (the single-call step prompt of a small coding task, as
`companion.singlecall.build_step` makes it for a real session), through the live provider
(`llm.local.LocalModel.stream`, the settings of `llm.constrain.constrained`):

- **free**: decoding without a grammar; **grammar**: the same call with the single-call grammar
  (Sym-Ops). A case's figure is its milliseconds per token: from the first streamed token to
  the last, over the tokens between (llama-cpp-python streams one token per delta), so the
  prompt, which the model keeps evaluated from the call before, is not in it.
- **busy**: free decoding while one CPU-bound process (a Python busy loop this bench starts
  before the call and stops after it) runs beside it — a person's laptop always runs something.
- **time to first token** of a cold call (the model's evaluated tokens emptied) against
  llama.cpp's own prompt time for it (`Usage.prompt_ms`): what the wait before the text costs
  beyond reading the prompt.

Bars (ratios within a round, median of the rounds; `_ratio`): grammar ms/token / free ≤ 1.10
(wall time; the same ratio of this process's CPU time per token is printed beside it: the machine's
other load stretches the wall time of both cases but not the grammar's own work);
busy ms/token / idle ≤ 1.25, i.e. busy decoding keeps ≥ 0.8× the idle tokens/s. The threads and
OpenMP wait policy in effect are printed with the load average (`llm.local` sets
OMP_WAIT_POLICY=PASSIVE unless the environment has one: run `OMP_WAIT_POLICY=ACTIVE duckflow
bench decode` to see the spin-waiting default's cost).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks._ratio import exit_code, machine, paired_ratio, ratio_bar, verdict
from duckflow.llm.types import Message, ModelSettings, TextDelta, UsageEvent

TASK = "Create stats.py with a function mean(xs) that returns the average of a list of numbers, then run it"
GRAMMAR_LIMIT = 1.10
BUSY_LIMIT = 1.25  # ms/token beside one CPU-bound process over idle: ≥ 0.8× the idle tokens/s
BUSY_LOOP = "while True:\n    pass\n"


def step_prompt(model: Any, model_name: str) -> tuple[list[Message], str | None]:
    """The single-call step prompt and grammar a real session builds for TASK in an empty workspace."""
    from duckflow.companion.factory import open_session
    from duckflow.companion.singlecall import build_step
    from duckflow.companion.store import SessionStore
    from duckflow.config import Config
    from duckflow.gate import Gate

    cfg = Config()
    cfg.trace.enabled = False
    with tempfile.TemporaryDirectory(prefix="duckflow-decode-") as d:
        root, home = Path(d) / "ws", Path(d) / "home"
        root.mkdir()
        opened = open_session(root, model=model, model_name=model_name, config=cfg,
                              store=SessionStore(home / "s.db"), gate=Gate(home / "g.db"),
                              codec="symops", mode="single-call")
        try:
            session = opened.session
            session.owner.change("task", lambda s: setattr(s, "task", TASK))
            step = build_step(session, TASK)
        finally:
            opened.close()
    return list(step.messages), step.grammar


async def timed_call(model: Any, messages: list[Message], settings: ModelSettings | None) -> dict[str, float]:
    """One streamed call: ms per token after the first, tokens, time to first token, llama.cpp's prompt ms."""
    stamps: list[float] = []
    cpu: list[float] = []
    prompt_ms = 0.0
    start = time.perf_counter()
    async for event in model.stream(messages, settings=settings):
        if isinstance(event, TextDelta) and event.text:
            stamps.append(time.perf_counter())
            cpu.append(time.process_time())
        elif isinstance(event, UsageEvent):
            prompt_ms = event.usage.prompt_ms
    tokens = len(stamps)
    per_token = (stamps[-1] - stamps[0]) * 1000 / (tokens - 1) if tokens > 1 else float("nan")
    cpu_per_token = (cpu[-1] - cpu[0]) * 1000 / (tokens - 1) if tokens > 1 else float("nan")
    return {"ms_per_token": per_token, "cpu_ms_per_token": cpu_per_token, "tokens": tokens,
            "ttft_ms": (stamps[0] - start) * 1000 if stamps else float("nan"), "prompt_ms": prompt_ms}


@contextmanager
def busy_process() -> Iterator[subprocess.Popen[bytes]]:
    """One CPU-bound process beside the measurement (started and stopped here)."""
    proc = subprocess.Popen([sys.executable, "-c", BUSY_LOOP])
    try:
        time.sleep(0.3)  # running before the call starts
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _rate(ms: float) -> float:
    return round(1000 / ms, 2) if ms and ms == ms else 0.0


async def measure(model_name: str, rounds: int, tokens: int, threads: int = 0) -> dict[str, Any]:
    from duckflow.companion.models import load_model
    from duckflow.config import Config
    from duckflow.llm.constrain import constrained

    cfg = Config()
    if threads:
        cfg.models.local_threads = threads
    model: Any = load_model(model_name, cfg)
    while getattr(model, "models", None):  # the FallbackModel around it: measure the model itself
        model = model.models[0]
    if getattr(model, "provider", "") != "local":
        raise SystemExit(f"duckflow bench decode: {model_name} is not an in-process model; use --model local:NAME")
    messages, grammar = step_prompt(model, model_name)
    # temperature 0: the free and the grammar call pick the same way; the grammar alone differs
    free = constrained(model, max_tokens=tokens, temperature=0.0, enabled=False)
    gram = constrained(model, max_tokens=tokens, grammar=grammar, temperature=0.0)
    model.llama  # noqa: B018 - loaded outside the figures

    def cold() -> None:
        with model.generation_lock:
            model.llama.reset()

    cold()
    first = await timed_call(model, messages, free)  # warm-up: the prompt is evaluated once here
    cases: dict[str, list[dict[str, float]]] = {"free": [], "grammar": [], "busy": [], "cold": []}
    for r in range(rounds):
        order = ["free", "grammar", "busy"] if r % 2 == 0 else ["busy", "grammar", "free"]
        for name in order:
            if name == "busy":
                with busy_process():
                    cases[name].append(await timed_call(model, messages, free))
            else:
                cases[name].append(await timed_call(model, messages, gram if name == "grammar" else free))
        cold()
        cases["cold"].append(await timed_call(model, messages, free))
        print(f"decode: round {r + 1}: " + ", ".join(
            f"{n} {_rate(cases[n][-1]['ms_per_token'])} tok/s" for n in ("free", "grammar", "busy")),
            file=sys.stderr, flush=True)
    ms = {n: [c["ms_per_token"] for c in cases[n]] for n in ("free", "grammar", "busy")}
    g = paired_ratio(ms["grammar"], ms["free"])
    b = paired_ratio(ms["busy"], ms["free"])
    ttft = [c["ttft_ms"] / c["prompt_ms"] for c in cases["cold"] if c["prompt_ms"] > 0]
    bars = [
        ratio_bar("grammar ms/token / free", g, GRAMMAR_LIMIT,
                  free_tok_s=_rate(statistics.median(ms["free"])), grammar_tok_s=_rate(statistics.median(ms["grammar"]))),
        ratio_bar("busy ms/token / idle (one CPU-bound process beside it)", b, BUSY_LIMIT,
                  idle_tok_s=_rate(statistics.median(ms["free"])), busy_tok_s=_rate(statistics.median(ms["busy"]))),
    ]
    return {
        "model": model_name, "threads": model.n_threads, "rounds": rounds, "max_tokens": tokens,
        "wait_policy": os.environ.get("OMP_WAIT_POLICY", "(unset)"),
        "prompt_tokens": _prompt_len(model, messages), "warmup_tokens": int(first["tokens"]),
        "tokens": {n: [int(c["tokens"]) for c in cases[n]] for n in cases},
        "tok_s": {n: [_rate(x) for x in ms[n]] for n in ms},
        "busy_over_idle_tok_s": round(1 / b["median"], 3) if b["median"] else 0.0,
        # this process's CPU time per token (all its threads): the grammar's own work, which the
        # machine's other load does not stretch as it stretches the wall time
        "cpu_ms_per_token": {n: [round(c["cpu_ms_per_token"], 2) for c in cases[n]] for n in ("free", "grammar")},
        "grammar_cpu_ratio": paired_ratio([c["cpu_ms_per_token"] for c in cases["grammar"]],
                                          [c["cpu_ms_per_token"] for c in cases["free"]]),
        "cold_ttft_ms": [round(c["ttft_ms"], 1) for c in cases["cold"]],
        "cold_prompt_ms": [round(c["prompt_ms"], 1) for c in cases["cold"]],
        "ttft_over_prompt": round(statistics.median(ttft), 3) if ttft else 0.0,
        "ratios": bars, "machine": machine(),
    }


def _prompt_len(model: Any, messages: list[Message]) -> int:
    from duckflow.llm.local import prompt_token_ids, to_chat_messages

    return len(prompt_token_ids(model.llama, to_chat_messages(messages)))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="duckflow bench decode")
    parser.add_argument("--model", default="local:default", help="an in-process model (default: local:default)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=48, help="tokens to generate per call (default 48)")
    parser.add_argument("--threads", type=int, default=0, help="llama.cpp threads (default: Duckflow's choice)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    try:
        out = asyncio.run(measure(args.model, max(1, args.rounds), max(8, args.tokens), args.threads))
    except Exception as exc:  # a missing llama-cpp-python or model: one line, no traceback
        from duckflow.errors import DuckflowError

        if isinstance(exc, DuckflowError):
            print(f"duckflow bench decode: {exc.message}" + (f" ({exc.hint})" if exc.hint else ""), file=sys.stderr)
            return 1
        raise
    out["command"] = "duckflow bench decode " + " ".join(argv)
    passes = [bar["pass"] for bar in out["ratios"]]
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
    else:
        print(f"{out['model']}: {out['threads']} threads, OMP_WAIT_POLICY={out['wait_policy']}, "
              f"prompt {out['prompt_tokens']} tokens, load average {out['machine']['load_avg']}")
        for bar in out["ratios"]:
            extra = ", ".join(f"{k} {v}" for k, v in bar.items() if k.endswith("tok_s"))
            print(f"{bar['bar']}: {bar['value']} (limit {bar['limit']}, min {bar['min']}, max {bar['max']}; {extra})")
        print(f"grammar CPU ms/token / free: {out['grammar_cpu_ratio']['median']} (this process's CPU time; "
              f"min {out['grammar_cpu_ratio']['min']}, max {out['grammar_cpu_ratio']['max']})")
        print(f"cold time to first token {out['cold_ttft_ms']} ms against llama.cpp's prompt time "
              f"{out['cold_prompt_ms']} ms: {out['ttft_over_prompt']}×")
        print(verdict({b["bar"]: b["pass"] for b in out["ratios"]}))
    return exit_code(passes)
