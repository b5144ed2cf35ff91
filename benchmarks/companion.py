"""`duckflow bench companion [--json]`: prompt tokens per turn and companion overhead per turn.

A fixed ten-turn scripted conversation (chat, plan, write behind the gate, approval, review,
done, a second request, ...) runs against a temporary workspace with the real tools, gate and
session store. Per turn it records the tokens of Base + Main (counted with count_tokens) and,
for turns that make the Specialized call, Base + Specialized; and the time the companion itself
spends per turn (prompt building, token budget, JSON reading, transitions, state persistence
after every change, chunks) — outside the model, the tools, the gate and the TokenGuard, whose times are
reported next to it (the gate's risk/audit/SQLite work belongs to the gate; its share is shown
so nothing is hidden). Bars: Base + Main ≤ 1,300 tokens per turn (issue 5); and, as a ratio
against a baseline measured in the same run (issue 12), the overhead per turn ≤ 10 engine turns
(`Agent.run` with the same ScriptedModel, one tool call): conversations and blocks of engine
turns run in interleaved rounds; per round, the mean overhead per turn over the mean engine
turn (the same statistic on both sides, over about the same time); the median of the
per-round ratios is held against the bar.

Streaming: the same conversation runs again against the scripted model behind a fixed
first-token latency (`TTFT_S`, then `PIECE_S` per streamed piece). Per turn that calls a
model, the time from the turn's start to the first streamed character a listener of
`CompanionSession.stream` receives is divided by the model's own first-token time in that
turn: 1.0 would mean the person sees text the moment the model produces it. Bar: for every
turn, the median of its ratios over the runs ≤ 1.5 (the Main decision's `reply` comes first in
its JSON, so its first words stream at once).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

TOKENS_BAR = 1300
# Issue 5's bar was "overhead < 5 ms per turn"; issue 12 makes it a ratio against an engine turn
# with the same model, measured in the same run. On this 2-core machine the mean engine turn was
# 0.51 ms at load 3 (median 0.26 ms; `duckflow bench engine`, 2026-11-26), so 5 ms is ~10 mean
# engine turns: the bar keeps that meaning.
OVERHEAD_RATIO_BAR = 10.0
# engine turns per round: a block about as long as a conversation's summed overhead (~30 ms),
# so a pause of the process (the machine is shared) is as likely to land in either
ENGINE_TURNS = 150
TTFC_RATIO_BAR = 1.5
TTFT_S = 0.05  # the scripted model's own time to its first token
PIECE_S = 0.002  # and per further streamed piece


class _Latent:
    """Wraps a scripted model: waits TTFT_S before its first piece; records when that piece left."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name, self.supports_tools, self.is_local = inner.name, inner.supports_tools, inner.is_local
        self.first_tokens: list[tuple[float, float]] = []  # (call start, first piece) per call

    async def stream(self, messages: Any, *, tools: Any = (), settings: Any = None) -> Any:
        start = time.perf_counter()
        first = True
        await asyncio.sleep(TTFT_S)
        async for event in self.inner.stream(messages, tools=tools, settings=settings):
            if event.kind == "text":
                if first:
                    self.first_tokens.append((start, time.perf_counter()))
                    first = False
                else:
                    await asyncio.sleep(PIECE_S)
            yield event


async def _ttfc_conversation(root: Path, home: Path) -> list[dict[str, Any]]:
    """Per turn: the companion's time to first streamed character / the model's own first-token time."""
    from duckflow.companion.factory import open_session
    from duckflow.companion.store import SessionStore
    from duckflow.gate import Gate
    from duckflow.llm.scripted import ScriptedModel

    model = _Latent(ScriptedModel(_script(), name="bench"))
    opened = open_session(root, model=model, store=SessionStore(home / "sessions.db"),
                          gate=Gate(home / "gate.db"), codec="native")
    s = opened.session
    first_char: list[float] = []
    s.chunks.subscribe(lambda c: first_char.append(time.perf_counter()) if c.type == "delta" else None)
    turns: list[dict[str, Any]] = []

    async def measure(label: str, coro: Any) -> None:
        first_char.clear()
        calls = len(model.first_tokens)
        t0 = time.perf_counter()
        await coro
        if first_char and len(model.first_tokens) > calls:
            start, token = model.first_tokens[calls]
            ttfc, ttft = first_char[0] - t0, token - start
            turns.append({"turn": label, "ttfc_ms": round(ttfc * 1000, 3), "model_ttft_ms": round(ttft * 1000, 3),
                          "ratio": round(ttfc / ttft, 3)})

    try:
        await measure("hi", s.handle_message("hi"))
        await measure("plan", s.handle_message("make a greeting module"))
        await measure("execute", s.continue_task(observed=True))
        await measure("approve", s.answer_approval(True, by="bench"))
        await measure("review", s.continue_task(observed=True))
        await measure("done", s.continue_task(observed=True))
        await measure("second request", s.handle_message("now add a test"))
        await measure("execute test", s.continue_task(observed=False))
        await measure("approve test", s.answer_approval(True, by="bench"))
        await measure("done again", s.continue_task(observed=True))
    finally:
        opened.close()
    return turns


def _ttfc_once() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        root, home = Path(tmp) / "ws", Path(tmp) / "home"
        root.mkdir()
        return asyncio.run(_ttfc_conversation(root, home))


def _script() -> list[Any]:
    from duckflow.companion.models import _decision
    from duckflow.llm.scripted import ScriptStep, reply, tool_call
    from duckflow.llm.types import ToolCall

    module = 'def greet(name: str) -> str:\n    return f"Hello, {name}!"\n'
    test = 'from greet import greet\n\n\ndef test_greet() -> None:\n    assert greet("duck") == "Hello, duck!"\n'
    d = _decision
    return [
        reply(d("PLANNING", "base_main", "pending_user", "a greeting, no action yet",
                "Hi! What shall we build?", {"goal": "a small greeting module"})),
        reply(d("PLANNING", "base_main_specialized", "continue", "plan the module first",
                "Planning.", {"plan_brief": ["look around", "write greet.py", "review"],
                              "why_now": "the person asked for it", "add_constraint": "standard library only"})),
        ScriptStep(text="Plan: greet\nSteps: 1. list 2. write greet.py 3. review\nRisk: low\nSuccess: greet works",
                   calls=[ToolCall("list_files", {"path": "."})]),
        reply(d("EXECUTION", "base_main_specialized", "continue", "write greet.py", "Writing greet.py.")),
        tool_call("write_file", path="greet.py", content=module),
        reply(d("REVIEW", "base_main_specialized", "continue", "read it back", "Reviewing.")),
        ScriptStep(text="Rating: good / Verdict: accept", calls=[ToolCall("read_file", {"path": "greet.py"})]),
        reply(d("DONE", "base_main", "done", "greet.py is done", "Done.")),
        reply(d("PLANNING", "base_main", "continue", "a test is next", "I'll add a test.",
                {"goal": "a test for greet", "plan_brief": ["write test_greet.py", "review"]})),
        reply(d("EXECUTION", "base_main_specialized", "continue", "write the test", "Writing the test.")),
        tool_call("write_file", path="test_greet.py", content=test),
        reply(d("DONE", "base_main", "done", "the test is written", "All done.")),
    ]


async def _conversation(root: Path, home: Path) -> list[dict[str, Any]]:
    from duckflow.companion.factory import open_session
    from duckflow.companion.store import SessionStore
    from duckflow.gate import Gate
    from duckflow.llm.scripted import ScriptedModel

    model = ScriptedModel(_script(), name="bench")
    opened = open_session(root, model=model, store=SessionStore(home / "sessions.db"),
                          gate=Gate(home / "gate.db"), codec="native")
    s = opened.session
    turns: list[dict[str, Any]] = []

    async def measure(label: str, coro: Any) -> Any:
        s.model_time_s = 0.0
        s.engine.guard_time_s = 0.0
        s.last_tokens = {}
        t0 = time.perf_counter()
        res = await coro
        wall = (time.perf_counter() - t0) * 1000
        tools_ms = sum(o.duration_ms for o in res.outcomes)
        gate_ms = sum(o.gate_ms for o in res.outcomes)
        model_ms = s.model_time_s * 1000
        guard_ms = s.engine.guard_time_s * 1000
        turns.append({"turn": label, "wall_ms": wall, "model_ms": model_ms, "tools_ms": tools_ms,
                      "gate_ms": gate_ms, "guard_ms": guard_ms,
                      "overhead_ms": wall - model_ms - tools_ms - gate_ms - guard_ms,
                      "tokens": dict(res.tokens), "step": s.state.step.value})
        return res

    try:
        await measure("hi", s.handle_message("hi"))
        await measure("plan", s.handle_message("make a greeting module"))
        await measure("execute", s.continue_task(observed=True))
        await measure("approve", s.answer_approval(True, by="bench"))
        await measure("review", s.continue_task(observed=True))
        await measure("done", s.continue_task(observed=True))
        await measure("second request", s.handle_message("now add a test"))
        await measure("execute test", s.continue_task(observed=False))
        await measure("approve test", s.answer_approval(True, by="bench"))
        await measure("done again", s.continue_task(observed=True))
    finally:
        opened.close()
    return turns


def _run_once() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        root, home = Path(tmp) / "ws", Path(tmp) / "home"
        root.mkdir()
        return asyncio.run(_conversation(root, home))


def _engine_turns(n: int) -> list[float]:
    """The baseline: `n` engine turns (`Agent.run`) with the same ScriptedModel — one tool call
    (a sync `add`), then the answer — after three warm-up turns; seconds per turn."""
    from benchmarks.engine import add
    from duckflow.core.agent import Agent
    from duckflow.llm.scripted import ScriptedModel, reply, tool_call

    async def go() -> list[float]:
        model = ScriptedModel(name="bench")
        agent = Agent("bench", "Add the numbers.", model=model, tools=[add])
        out: list[float] = []
        for _ in range(n + 3):
            model.add(tool_call("add", a=2, b=3), reply("5"))
            t0 = time.perf_counter()
            result = await agent.run("2+3?")
            out.append(time.perf_counter() - t0)
            if result.text != "5":
                raise RuntimeError(f"the baseline engine turn failed: {result.error}")
        return out[3:]

    return asyncio.run(go())


def measure(runs: int) -> dict[str, Any]:
    """Conversations and engine blocks in interleaved rounds; the figures and bars of one run."""
    from benchmarks._ratio import interleave, machine, paired_ratio, ratio_bar, summary
    from duckflow.prompts.budget import token_counter

    _, exact, method = token_counter()
    _run_once()  # warm-up: templates compiled, tokenizer loaded, databases created
    conversations: list[list[dict[str, Any]]] = []
    engine_means: list[float] = []

    def conversation() -> float:
        conversations.append(_run_once())
        return statistics.mean(t["overhead_ms"] for t in conversations[-1]) / 1000

    def engine_block() -> float:  # the mean, as the overhead per turn is a mean over the turns
        engine_means.append(statistics.mean(_engine_turns(ENGINE_TURNS)))
        return engine_means[-1]

    times = interleave({"companion": conversation, "engine": engine_block}, max(1, runs), warmup=0, collect=True)
    overhead_ratio = paired_ratio(times["companion"], times["engine"])
    walls = [statistics.mean(t["wall_ms"] for t in r) / 1000 for r in conversations]
    first = conversations[0]
    base_main = [t["tokens"]["base"] + t["tokens"]["main"] for t in first if "main" in t["tokens"]]
    spec = [t["tokens"]["base"] + t["tokens"]["specialized"] for t in first if "specialized" in t["tokens"]]
    per_turn_overhead = [statistics.mean(r[i]["overhead_ms"] for r in conversations) for i in range(len(first))]
    mean_overhead = statistics.mean(per_turn_overhead)

    def per_turn(key: str) -> float:
        return statistics.mean(statistics.mean(t[key] for t in r) for r in conversations)

    engine_ms = statistics.median(engine_means) * 1000
    result: dict[str, Any] = {
        "machine": machine(), "turns": len(first), "runs": len(conversations),
        "tokenizer": {"exact": exact, "method": method},
        "base_main_tokens": {"max": max(base_main), "mean": round(statistics.mean(base_main), 1),
                             "per_turn": base_main},
        "specialized_call_tokens": {"max": max(spec) if spec else 0,
                                    "mean": round(statistics.mean(spec), 1) if spec else 0,
                                    "per_turn": spec},
        "base_main_plus_specialized_max": max(base_main) + (max(spec) if spec else 0),
        "overhead_ms": {"mean": round(mean_overhead, 3), "max": round(max(per_turn_overhead), 3),
                        "per_round": summary(times["companion"], 1000, 3),
                        "per_turn": {t["turn"]: round(v, 3) for t, v in zip(first, per_turn_overhead, strict=True)}},
        "engine_turn_ms": summary(times["engine"], 1000, 4),
        "companion_turn_vs_engine_turn": paired_ratio(walls, times["engine"]),
        "gate_ms_per_turn": round(per_turn("gate_ms"), 3),
        "tools_ms_per_turn": round(per_turn("tools_ms"), 3),
        "token_guard_ms_per_turn": round(per_turn("guard_ms"), 3),
        "overhead_with_gate_ms": round(mean_overhead + per_turn("gate_ms"), 3),
    }
    ratios = [ratio_bar("companion overhead per turn / engine turn", overhead_ratio, OVERHEAD_RATIO_BAR,
                        overhead_ms=round(mean_overhead, 3), engine_turn_ms=round(engine_ms, 4))]
    streamed = [_ttfc_once() for _ in range(max(1, runs))]
    per_turn_ratio = [statistics.median(r[i]["ratio"] for r in streamed) for i in range(len(streamed[0]))]
    worst = max(per_turn_ratio)
    result["time_to_first_char"] = {
        "model_ttft_ms": TTFT_S * 1000, "runs": len(streamed), "per_turn": [
            {**t, "ratio": round(v, 3)} for t, v in zip(streamed[0], per_turn_ratio, strict=True)],
        "ratio_median": round(statistics.median(per_turn_ratio), 3), "ratio_max": round(worst, 3)}
    ratios.append({"bar": "first streamed character / model's first token (worst turn)", "value": round(worst, 3),
                   "limit": TTFC_RATIO_BAR, "pass": worst <= TTFC_RATIO_BAR,
                   "min": round(min(per_turn_ratio), 3), "max": round(worst, 3)})
    result["ratios"] = ratios
    result["bars"] = {
        "base_main_tokens_le_1300": {"value": max(base_main), "bar": TOKENS_BAR, "pass": max(base_main) <= TOKENS_BAR},
        "overhead_ratio": {"value": ratios[0]["value"], "bar": OVERHEAD_RATIO_BAR, "pass": ratios[0]["pass"]},
        "ttfc_ratio_le_1_5": {"value": ratios[1]["value"], "bar": TTFC_RATIO_BAR, "pass": ratios[1]["pass"]},
    }
    result["pass"] = all(b["pass"] for b in result["bars"].values())
    return result


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="duckflow bench companion")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--runs", type=int, default=7, help="interleaved rounds after one warm-up (default 7)")
    args = parser.parse_args(argv)
    result = measure(args.runs)
    ok = bool(result["pass"])
    if args.json:
        print(json.dumps(result))
        return 0 if ok else 1
    _print(result)
    return 0 if ok else 1


def _print(r: dict[str, Any]) -> None:
    tok = "exact" if r["tokenizer"]["exact"] else "estimated"
    print(f"companion bench: {r['turns']}-turn scripted conversation, {r['runs']} interleaved rounds after a "
          f"warm-up; load {r['machine']['load_avg']} on {r['machine']['cpus']} cpus")
    print(f"  tokens ({tok}, {r['tokenizer']['method']})")
    print(f"    Base + Main per turn: max {r['base_main_tokens']['max']}, mean {r['base_main_tokens']['mean']}")
    if r["specialized_call_tokens"]["max"]:
        print(f"    Base + Specialized (turns with the Specialized call): max {r['specialized_call_tokens']['max']}, "
              f"mean {r['specialized_call_tokens']['mean']}")
    o, e = r["overhead_ms"], r["engine_turn_ms"]
    print(f"  companion overhead (outside model, tools, gate): mean {o['mean']:.3f} ms/turn "
          f"(per round {o['per_round']['min']}–{o['per_round']['max']} ms)")
    print(f"  baseline: an engine turn (Agent.run, same ScriptedModel, one tool call): mean {e['median']} ms "
          f"(median of the rounds; per round {e['min']}–{e['max']} ms); a whole companion turn is "
          f"{r['companion_turn_vs_engine_turn']['median']}× an engine turn")
    print(f"  reported next to it: gate {r['gate_ms_per_turn']:.3f} ms/turn, tools {r['tools_ms_per_turn']:.3f} ms/turn, "
          f"TokenGuard around model calls {r['token_guard_ms_per_turn']:.3f} ms/turn "
          f"(companion + gate: {r['overhead_with_gate_ms']:.3f} ms/turn)")
    for turn, v in o["per_turn"].items():
        print(f"    {turn:<15} {v:7.3f} ms")
    ttfc = r["time_to_first_char"]
    print(f"  time to first streamed character / the model's own first-token time ({TTFT_S * 1000:.0f} ms), "
          f"median of {ttfc['runs']} runs per turn: median {ttfc['ratio_median']}, worst turn {ttfc['ratio_max']}")
    for t in ttfc["per_turn"]:
        print(f"    {t['turn']:<15} {t['ttfc_ms']:8.2f} ms / {t['model_ttft_ms']:6.2f} ms; median ratio {t['ratio']}")
    for b in r["ratios"]:
        print(f"  {'PASS' if b['pass'] else 'FAIL'}  {b['bar']}: {b['value']} (min {b['min']}, max {b['max']}; "
              f"bar <= {b['limit']})")
    b = r["bars"]["base_main_tokens_le_1300"]
    print(f"  {'PASS' if b['pass'] else 'FAIL'}  Base + Main tokens per turn: {b['value']} (bar <= {b['bar']})")
