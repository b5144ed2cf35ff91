"""`duckflow bench companion [--json]`: prompt tokens per turn and companion overhead per turn.

A fixed ten-turn scripted conversation (chat, plan, write behind the gate, approval, review,
done, a second request, ...) runs against a temporary workspace with the real tools, gate and
session store. Per turn it records the tokens of Base + Main (counted with count_tokens) and,
for turns that make the Specialized call, Base + Specialized; and the time the companion itself
spends per turn (prompt building, token budget, JSON reading, transitions, state persistence
after every change, chunks) — outside the model, the tools, the gate and the TokenGuard, whose times are
reported next to it (the gate's risk/audit/SQLite work belongs to the gate; its share is shown
so nothing is hidden). Bars (issue 5): Base + Main ≤ 1,300 tokens per turn; overhead < 5 ms
per turn (mean over the measured runs, after one warm-up run).

Streaming: the same conversation runs again against the scripted model behind a fixed
first-token latency (`TTFT_S`, then `PIECE_S` per streamed piece). Per turn that calls a
model, the time from the turn's start to the first streamed character a listener of
`CompanionSession.stream` receives is divided by the model's own first-token time in that
turn: 1.0 would mean the person sees text the moment the model produces it. Bar: ratio ≤ 1.5
(the Main decision's `reply` comes first in its JSON, so its first words stream at once).
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
OVERHEAD_BAR_MS = 5.0
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


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="duckflow bench companion")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--runs", type=int, default=5, help="measured runs after one warm-up (default 5)")
    args = parser.parse_args(argv)

    from duckflow.prompts.budget import token_counter

    _, exact, method = token_counter()
    _run_once()  # warm-up: templates compiled, tokenizer loaded, databases created
    runs = [_run_once() for _ in range(max(1, args.runs))]
    first = runs[0]
    base_main = [t["tokens"]["base"] + t["tokens"]["main"] for t in first if "main" in t["tokens"]]
    spec = [t["tokens"]["base"] + t["tokens"]["specialized"] for t in first if "specialized" in t["tokens"]]
    per_turn_overhead = [statistics.mean(r[i]["overhead_ms"] for r in runs) for i in range(len(first))]
    mean_overhead = statistics.mean(per_turn_overhead)
    gate_per_turn = statistics.mean(statistics.mean(t["gate_ms"] for t in r) for r in runs)
    tools_per_turn = statistics.mean(statistics.mean(t["tools_ms"] for t in r) for r in runs)
    guard_per_turn = statistics.mean(statistics.mean(t["guard_ms"] for t in r) for r in runs)
    result = {
        "turns": len(first),
        "tokenizer": {"exact": exact, "method": method},
        "base_main_tokens": {"max": max(base_main), "mean": round(statistics.mean(base_main), 1),
                             "per_turn": base_main},
        "specialized_call_tokens": {"max": max(spec) if spec else 0,
                                    "mean": round(statistics.mean(spec), 1) if spec else 0,
                                    "per_turn": spec},
        "base_main_plus_specialized_max": max(base_main) + (max(spec) if spec else 0),
        "overhead_ms": {"mean": round(mean_overhead, 3), "max": round(max(per_turn_overhead), 3),
                        "per_turn": {t["turn"]: round(v, 3) for t, v in zip(first, per_turn_overhead, strict=True)}},
        "gate_ms_per_turn": round(gate_per_turn, 3),
        "tools_ms_per_turn": round(tools_per_turn, 3),
        "token_guard_ms_per_turn": round(guard_per_turn, 3),
        "overhead_with_gate_ms": round(mean_overhead + gate_per_turn, 3),
        "runs": len(runs),
        "bars": {
            "base_main_tokens_le_1300": {"value": max(base_main), "bar": TOKENS_BAR,
                                         "pass": max(base_main) <= TOKENS_BAR},
            "overhead_ms_lt_5": {"value": round(mean_overhead, 3), "bar": OVERHEAD_BAR_MS,
                                 "pass": mean_overhead < OVERHEAD_BAR_MS},
        },
    }
    streamed = [_ttfc_once() for _ in range(max(1, min(3, args.runs)))]
    ratios = [statistics.mean(r[i]["ratio"] for r in streamed) for i in range(len(streamed[0]))]
    result["time_to_first_char"] = {
        "model_ttft_ms": TTFT_S * 1000, "per_turn": [
            {**t, "ratio": round(v, 3)} for t, v in zip(streamed[0], ratios, strict=True)],
        "ratio_mean": round(statistics.mean(ratios), 3), "ratio_max": round(max(ratios), 3)}
    result["bars"]["ttfc_ratio_le_1_5"] = {"value": round(max(ratios), 3), "bar": TTFC_RATIO_BAR,
                                           "pass": max(ratios) <= TTFC_RATIO_BAR}
    ok = all(b["pass"] for b in result["bars"].values())
    result["pass"] = ok
    if args.json:
        print(json.dumps(result))
        return 0 if ok else 1
    tok = "exact" if exact else "estimated"
    print(f"companion bench: {len(first)}-turn scripted conversation, {len(runs)} runs after a warm-up")
    print(f"  tokens ({tok}, {method})")
    print(f"    Base + Main per turn: max {max(base_main)}, mean {result['base_main_tokens']['mean']}")
    if spec:
        print(f"    Base + Specialized (turns with the Specialized call): max {max(spec)}, "
              f"mean {result['specialized_call_tokens']['mean']}")
    print(f"  companion overhead (outside model, tools, gate): mean {mean_overhead:.3f} ms/turn, "
          f"max {max(per_turn_overhead):.3f} ms")
    print(f"  reported next to it: gate {gate_per_turn:.3f} ms/turn, tools {tools_per_turn:.3f} ms/turn, "
          f"TokenGuard around model calls {guard_per_turn:.3f} ms/turn "
          f"(companion + gate: {mean_overhead + gate_per_turn:.3f} ms/turn)")
    for t, v in zip(first, per_turn_overhead, strict=True):
        print(f"    {t['turn']:<15} {v:7.3f} ms   {t['step']}")
    ttfc = result["time_to_first_char"]
    print(f"  time to first streamed character / the model's own first-token time ({TTFT_S * 1000:.0f} ms): "
          f"mean {ttfc['ratio_mean']}, max {ttfc['ratio_max']}")
    for t in ttfc["per_turn"]:
        print(f"    {t['turn']:<15} {t['ttfc_ms']:8.2f} ms / {t['model_ttft_ms']:6.2f} ms = {t['ratio']}")
    for name, b in result["bars"].items():
        print(f"  {'PASS' if b['pass'] else 'FAIL'}  {name}: {b['value']} (bar {b['bar']})")
    return 0 if ok else 1
