"""`duckflow bench engine [--json] [--require-peers] [--concurrency 100,500]`: the engine against its peers.

One turn = a model call that asks for one tool call, the tool (a sync `add`), and a second
call giving the final answer. Every framework gets the cheapest fake model it allows, written
here against its public model interface and answering from the conversation it is given (no
script bookkeeping, no copies): Duckflow a bare `Model`, pydantic-ai a `FunctionModel` (with a
stream function), openai-agents a bare `agents.models.interface.Model` whose output items and
stream events are built once, up front. Each framework runs its default path (`agent.run(x)`
with no explicit session; streaming: Duckflow `agent.stream`, pydantic-ai `run_stream_events`,
openai-agents `Runner.run_streamed(...).stream_events()`).

Turns are timed in interleaved rounds with the order shuffled in each round; mean, median and
p90 are reported. `--concurrency` runs N turns at once in one event loop per framework and
reports per-run time and failures. Memory: what 3,000 anonymous Duckflow runs leave behind
(tracemalloc, after a collection) and bytes per live named session.

Bars (ratios measured in this run): Duckflow's median turn ≤ 0.10 of the fastest peer's, for
run and for stream; ≤ 1 MB retained after 3,000 anonymous runs. Peers come from the `[bench]`
extra; without them the ratio bars are "not measured", and `--require-peers` makes that a
failure.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import random
import statistics
import time
import tracemalloc
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from benchmarks._ratio import exit_code, machine, paired_ratio, ratio_bar, summary

INSTALL_HINT = "make bench (installs the [bench] extra), or pip install -e '.[bench]'"
TURN_RATIO = 0.10
RETAINED_BAR_BYTES = 1_000_000
ANON_RUNS = 3000
LIVE_SESSIONS = 200

Turn = Callable[[], Awaitable[Any]]


def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


@dataclass
class Contender:
    name: str
    run: Turn | None = None
    stream: Turn | None = None
    missing: str | None = None
    times: dict[str, list[float]] = field(default_factory=lambda: {"run": [], "stream": []})
    rounds: dict[str, list[float]] = field(default_factory=lambda: {"run": [], "stream": []})
    concurrency: dict[str, Any] = field(default_factory=dict)


def duckflow_agent() -> Any:
    """A Duckflow Agent with a bare fake Model (answers from the conversation it is given)."""
    from duckflow.core.agent import Agent
    from duckflow.llm.types import (
        FinishEvent,
        Message,
        ModelEvent,
        ModelSettings,
        TextDelta,
        ToolCall,
        ToolCallEvent,
        ToolSpec,
        Usage,
        UsageEvent,
    )

    class FakeModel:
        name, supports_tools, is_local = "bench:fake", True, True

        async def stream(self, messages: Any, *, tools: tuple[ToolSpec, ...] | Any = (),
                         settings: ModelSettings | None = None) -> AsyncIterator[ModelEvent]:
            last: Message = messages[-1]
            if last.role == "tool":
                yield TextDelta("5")
                yield UsageEvent(Usage(12, 1))
                yield FinishEvent("stop")
            else:
                yield ToolCallEvent(ToolCall("add", {"a": 2, "b": 3}, id="c1"))
                yield UsageEvent(Usage(10, 5))
                yield FinishEvent("tool_calls")

    return Agent("bench", "Add the numbers.", model=FakeModel(), tools=[add])


def duckflow_contender() -> Contender:
    agent = duckflow_agent()

    async def run() -> Any:
        result = await agent.run("2+3?")
        assert result.text == "5", result.error

    async def stream() -> Any:
        last = None
        async for chunk in agent.stream("2+3?"):
            last = chunk
        assert last is not None and last.type == "done"

    return Contender("duckflow", run, stream)


def pydantic_ai_contender() -> Contender:
    try:
        from pydantic_ai import Agent as PAgent
        from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
        from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
    except ImportError:
        return Contender("pydantic-ai", missing=f"not installed: {INSTALL_HINT}")

    def answered(messages: list[Any]) -> bool:
        return any(isinstance(p, ToolReturnPart) for p in messages[-1].parts)

    def function(messages: list[Any], info: AgentInfo) -> ModelResponse:
        if answered(messages):
            return ModelResponse(parts=[TextPart("5")])
        return ModelResponse(parts=[ToolCallPart("add", {"a": 2, "b": 3})])

    async def stream_function(messages: list[Any], info: AgentInfo) -> AsyncIterator[Any]:
        if answered(messages):
            yield "5"
        else:
            yield {0: DeltaToolCall(name="add", json_args='{"a": 2, "b": 3}')}

    agent = PAgent(FunctionModel(function, stream_function=stream_function),
                   instructions="Add the numbers.", tools=[add])

    async def run() -> Any:
        result = await agent.run("2+3?")
        assert str(result.output) == "5"

    async def stream() -> Any:
        async with agent.run_stream_events("2+3?") as events:
            async for _event in events:
                pass

    return Contender("pydantic-ai", run, stream)


async def openai_agents_contender() -> Contender:
    try:
        from agents import Agent as OAgent
        from agents import Runner, function_tool, set_tracing_disabled
        from agents.items import ModelResponse
        from agents.models.interface import Model
        from agents.testing import ScriptedModel as OScripted
        from agents.testing import assistant_message, function_call
        from agents.usage import Usage as OUsage
    except ImportError:
        return Contender("openai-agents", missing=f"not installed: {INSTALL_HINT}")
    set_tracing_disabled(True)
    call_item = function_call("add", {"a": 2, "b": 3}, call_id="c1")
    answer_item = assistant_message("5")

    # stream events recorded once from the library's own scripted model, then replayed
    recorder = OScripted([[call_item], [answer_item]])
    events: list[list[Any]] = []
    for _ in range(2):
        events.append([e async for e in recorder.stream_response(
            None, "x", _settings(), [], None, [], _tracing(), previous_response_id=None,
            conversation_id=None, prompt=None)])

    def answered(items: Any) -> bool:
        return isinstance(items, list) and bool(items) and _kind(items[-1]) == "function_call_output"

    class FakeModel(Model):
        async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kw: Any) -> Any:
            item = answer_item if answered(input) else call_item
            return ModelResponse(output=[item], usage=OUsage(), response_id=None)

        async def stream_response(self, system_instructions: Any, input: Any, *args: Any,
                                  **kw: Any) -> AsyncIterator[Any]:
            for event in events[1 if answered(input) else 0]:
                yield event

    agent = OAgent(name="bench", instructions="Add the numbers.", tools=[function_tool(add)], model=FakeModel())

    async def run() -> Any:
        result = await Runner.run(agent, "2+3?")
        assert str(result.final_output) == "5"

    async def stream() -> Any:
        result = Runner.run_streamed(agent, "2+3?")
        async for _event in result.stream_events():
            pass
        assert str(result.final_output) == "5"

    return Contender("openai-agents", run, stream)


def _settings() -> Any:
    from agents.model_settings import ModelSettings

    return ModelSettings()


def _tracing() -> Any:
    from agents.models.interface import ModelTracing

    return ModelTracing.DISABLED


def _kind(item: Any) -> str | None:
    return item.get("type") if isinstance(item, dict) else getattr(item, "type", None)


async def measure_turns(live: list[Contender], turns: int, rounds: int, warmup: int, seed: int = 0) -> None:
    """Per round, every (framework, mode) block of `turns` turns, in a shuffled order.

    Each block starts after a full collection, so no framework pays for another's garbage; the
    block's median goes to `rounds` (the per-round ratios are taken from those).
    """
    rng = random.Random(seed)
    blocks = [(c, mode) for c in live for mode in ("run", "stream")]
    for c, mode in blocks:
        for _ in range(warmup):
            await getattr(c, mode)()
    for _ in range(rounds):
        rng.shuffle(blocks)
        for c, mode in blocks:
            fn = getattr(c, mode)
            block: list[float] = []
            gc.collect()
            for _ in range(turns):
                started = time.perf_counter()
                await fn()
                block.append(time.perf_counter() - started)
            c.times[mode] += block
            c.rounds[mode].append(statistics.median(block))


async def measure_concurrency(live: list[Contender], levels: list[int]) -> None:
    """N runs at once in this event loop: per-run time (wall / N) and failures."""
    for n in levels:
        for c in live:
            assert c.run is not None
            started = time.perf_counter()
            results = await asyncio.gather(*(c.run() for _ in range(n)), return_exceptions=True)
            wall = time.perf_counter() - started
            failures = [r for r in results if isinstance(r, BaseException)]
            c.concurrency[str(n)] = {"wall_s": round(wall, 4), "per_run_ms": round(wall * 1000 / n, 4),
                                     "failures": len(failures),
                                     "first_failure": repr(failures[0])[:200] if failures else None}


async def retained_after_anonymous_runs(runs: int = ANON_RUNS) -> dict[str, Any]:
    """Bytes still allocated after `runs` anonymous Duckflow runs with 10 KB inputs."""
    agent = duckflow_agent()
    text = "2+3? " + "x" * 10_000
    for _ in range(20):  # warm caches (schemas, interned strings) before measuring
        await agent.run(text)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for _ in range(runs):
        await agent.run(text)
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    retained = after - before
    return {"runs": runs, "input_bytes": len(text), "retained_bytes": retained,
            "per_run_bytes": round(retained / runs, 1), "bar_bytes": RETAINED_BAR_BYTES}


async def bytes_per_live_session(sessions: int = LIVE_SESSIONS) -> dict[str, Any]:
    """Memory each live named session holds (its history in the agent's session store): one
    turn in each of `sessions` sessions, measured while the agent keeps them all."""
    agent = duckflow_agent()
    await agent.run("2+3?", session="warm")  # caches (schemas, interned strings) before measuring
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for i in range(sessions):
        await agent.run("2+3?", session=f"live-{i}")
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return {"sessions": sessions, "bytes_per_session": round((after - before) / sessions, 1)}


def turn_ratio(mode: str, ours: Contender, peers: list[Contender]) -> dict[str, Any]:
    """Duckflow's turn against the fastest peer's, round by round (both blocks of one round ran
    seconds apart, in a shuffled order): per round, our block median / the lowest peer block
    median of that round; the median of those is held against the bar."""
    name = f"{mode}: Duckflow turn / fastest peer's"
    live = [p for p in peers if p.rounds[mode]]
    if not ours.rounds[mode] or not live:
        return {"bar": name, "value": None, "limit": TURN_RATIO, "pass": None, "result": "not measured"}
    fastest = [min(per_round) for per_round in zip(*(p.rounds[mode] for p in live), strict=True)]
    bar = ratio_bar(name, paired_ratio(ours.rounds[mode], fastest), TURN_RATIO,
                    duckflow_ms=round(statistics.median(ours.times[mode]) * 1000, 4),
                    fastest_peer_ms=round(statistics.median(fastest) * 1000, 4),
                    fastest_peer=min(live, key=lambda p: statistics.median(p.times[mode])).name)
    bar["result"] = "PASS" if bar["pass"] else "FAIL"
    return bar


async def _main(args: argparse.Namespace) -> dict[str, Any]:
    contenders = [duckflow_contender(), pydantic_ai_contender(), await openai_agents_contender()]
    live = [c for c in contenders if c.missing is None]
    await measure_turns(live, args.turns, args.rounds, warmup=10)
    if args.concurrency:
        await measure_concurrency(live, args.concurrency)
    retained = await retained_after_anonymous_runs(args.anonymous_runs)
    live_sessions = await bytes_per_live_session(args.live_sessions)
    ours, peers = contenders[0], [c for c in contenders[1:] if c.missing is None]
    ratios = [turn_ratio("run", ours, peers), turn_ratio("stream", ours, peers)]
    kept = retained["retained_bytes"]
    bars = [*ratios, {"bar": f"retained after {args.anonymous_runs} anonymous runs", "value": kept,
                      "limit": RETAINED_BAR_BYTES, "pass": kept <= RETAINED_BAR_BYTES,
                      "result": "PASS" if kept <= RETAINED_BAR_BYTES else "FAIL"}]
    return {
        "bench": "engine", "machine": machine(),
        "turn": "fake model -> one tool call (sync add) -> tool -> final answer",
        "turns_per_block": args.turns, "rounds": args.rounds,
        "frameworks": [{"name": c.name, "missing": c.missing,
                        "run_ms": summary(c.times["run"], 1000) if c.times["run"] else None,
                        "stream_ms": summary(c.times["stream"], 1000) if c.times["stream"] else None,
                        "concurrency": c.concurrency} for c in contenders],
        "retained": retained, "live_sessions": live_sessions, "bars": bars, "ratios": ratios,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="duckflow bench engine", description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--turns", type=int, default=40, help="turns per framework and mode per round")
    parser.add_argument("--rounds", type=int, default=9, help="interleaved rounds (order shuffled in each)")
    parser.add_argument("--concurrency", type=lambda s: [int(x) for x in s.split(",") if x], default=[],
                        help="e.g. 100,500: that many runs at once, per framework")
    parser.add_argument("--anonymous-runs", type=int, default=ANON_RUNS)
    parser.add_argument("--live-sessions", type=int, default=LIVE_SESSIONS,
                        help="named sessions kept live for the memory-per-session figure")
    parser.add_argument("--require-peers", action="store_true", help="fail when a peer framework is missing")
    args = parser.parse_args(argv)
    report = asyncio.run(_main(args))
    missing = [f for f in report["frameworks"] if f["missing"]]
    if args.json:
        print(json.dumps(report))
    else:
        _print_human(report)
    if missing and args.require_peers:
        import sys

        print("duckflow bench engine: peers missing (" + ", ".join(f["name"] for f in missing)
              + f"); {INSTALL_HINT}", file=sys.stderr)
        return 1
    return exit_code([b["pass"] for b in report["bars"]])


def _print_human(r: dict[str, Any]) -> None:
    print(f"duckflow bench engine: {r['turn']}; {r['rounds']} rounds × {r['turns_per_block']} turns; "
          f"load {r['machine']['load_avg']}")
    for f in r["frameworks"]:
        if f["missing"]:
            print(f"  {f['name']:14} not measured ({f['missing']})")
            continue
        for mode in ("run", "stream"):
            s = f[f"{mode}_ms"]
            print(f"  {f['name']:14} {mode:6} median {s['median']:.4f} ms  mean {s['mean']:.4f}  p90 {s['p90']:.4f}")
        for n, c in f["concurrency"].items():
            print(f"  {f['name']:14} {n} at once: {c['per_run_ms']:.4f} ms per run, {c['failures']} failures")
    ret = r["retained"]
    print(f"  retained after {ret['runs']} anonymous runs: {ret['retained_bytes'] / 1024:.1f} KiB "
          f"({ret['per_run_bytes']} B per run)")
    live = r["live_sessions"]
    print(f"  memory per live named session: {live['bytes_per_session'] / 1024:.2f} KiB ({live['sessions']} sessions)")
    for b in r["bars"]:
        spread = f" (per round min {b['min']}, max {b['max']}; {b['duckflow_ms']} ms against {b['fastest_peer']} " \
                 f"{b['fastest_peer_ms']} ms)" if "min" in b else ""
        print(f"  {b['bar']}: {b.get('value', '-')}{spread} (limit {b['limit']}) {b['result']}")
