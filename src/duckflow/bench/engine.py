"""`duckflow bench engine [--json]`: framework overhead per agent turn, memory per session, startup.

One turn = a scripted model call that asks for one tool call, the tool (a sync `add`), and a
second scripted call giving the final answer. The same turn runs, interleaved in rounds, on
Duckflow (`ScriptedModel`), pydantic-ai (`FunctionModel` and `TestModel`) and openai-agents
(`agents.testing.ScriptedModel`, tracing off). The models do no work, so the time per turn is
the framework's overhead. Memory per live session is what `tracemalloc` sees for the state
needed to continue each conversation (Duckflow `Session`, pydantic-ai `all_messages()`,
openai-agents `to_input_list()`), per session. The two other frameworks come from the
`[bench]` extra and are reported as not measured when absent.

Bars: Duckflow's overhead ≤ 1/3 of the faster other framework; `python -c "import duckflow"`
< 100 ms and `duckflow --help` < 150 ms, each best of N minus a `python -c pass` baseline.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import shutil
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

INSTALL_HINT = ".venv/bin/pip install -e '.[bench]'"
OVERHEAD_RATIO = 1 / 3
IMPORT_BAR_MS = 100.0
HELP_BAR_MS = 150.0


def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


@dataclass
class Contender:
    """One framework doing the turn: `prepare(n)` builds n scripted models, `turn(i)` runs one."""

    name: str
    prepare: Callable[[int], None] | None = None
    turn: Callable[[int], Awaitable[Any]] | None = None
    missing: str | None = None
    times: list[float] = field(default_factory=list)
    session_bytes: float | None = None

    @property
    def median_ms(self) -> float | None:
        return statistics.median(self.times) * 1000 if self.times else None


def duckflow_contender() -> Contender:
    from duckflow.core.agent import Agent
    from duckflow.core.session import Session
    from duckflow.llm.scripted import ScriptedModel, reply, tool_call

    agent = Agent("bench", "Add the numbers.", tools=[add])
    models: list[ScriptedModel | None] = []

    def prepare(n: int) -> None:
        models[:] = [ScriptedModel([tool_call("add", a=2, b=3), reply("5")]) for _ in range(n)]

    async def turn(i: int) -> Any:
        agent.model, models[i] = models[i], None
        session = Session()
        result = await agent.run("2+3?", session=session)
        assert result.text == "5", result.error
        return session

    return Contender("duckflow", prepare, turn)


def pydantic_ai_contenders() -> list[Contender]:
    try:
        from pydantic_ai import Agent as PAgent
        from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
        from pydantic_ai.models.function import AgentInfo, FunctionModel
        from pydantic_ai.models.test import TestModel
    except ImportError:
        note = f"not installed: {INSTALL_HINT}"
        return [Contender("pydantic-ai (FunctionModel)", missing=note),
                Contender("pydantic-ai (TestModel)", missing=note)]

    def script(messages: list[Any], info: AgentInfo) -> ModelResponse:
        if any(isinstance(p, ToolReturnPart) for p in messages[-1].parts):
            return ModelResponse(parts=[TextPart("5")])
        return ModelResponse(parts=[ToolCallPart("add", {"a": 2, "b": 3})])

    out = []
    for label, model in (("FunctionModel", FunctionModel(script)), ("TestModel", TestModel())):
        agent = PAgent(model, instructions="Add the numbers.", tools=[add])

        async def turn(i: int, agent: Any = agent) -> Any:
            result = await agent.run("2+3?")
            return result.all_messages()

        out.append(Contender(f"pydantic-ai ({label})", None, turn))
    return out


def openai_agents_contender() -> Contender:
    try:
        from agents import Agent as OAgent
        from agents import Runner, function_tool, set_tracing_disabled
        from agents.testing import ScriptedModel as OScripted
        from agents.testing import assistant_message, function_call
    except ImportError:
        return Contender("openai-agents (ScriptedModel)", missing=f"not installed: {INSTALL_HINT}")
    set_tracing_disabled(True)
    agent = OAgent(name="bench", instructions="Add the numbers.", tools=[function_tool(add)])
    models: list[Any] = []

    def prepare(n: int) -> None:
        models[:] = [OScripted([[function_call("add", {"a": 2, "b": 3}, call_id="c1")],
                                [assistant_message("5")]]) for _ in range(n)]

    async def turn(i: int) -> Any:
        agent.model, models[i] = models[i], None
        result = await Runner.run(agent, "2+3?")
        assert str(result.final_output) == "5"
        return result.to_input_list()

    return Contender("openai-agents (ScriptedModel)", prepare, turn)


async def measure_turns(contenders: list[Contender], turns: int, rounds: int, warmup: int) -> None:
    live = [c for c in contenders if c.missing is None and c.turn is not None]
    for c in live:  # warm up imports, caches, schemas
        if c.prepare:
            c.prepare(warmup)
        for i in range(warmup):
            await c.turn(i)  # type: ignore[misc]
    for _ in range(rounds):
        for c in live:
            if c.prepare:
                c.prepare(turns)
            for i in range(turns):
                started = time.perf_counter()
                await c.turn(i)  # type: ignore[misc]
                c.times.append(time.perf_counter() - started)


async def measure_memory(contenders: list[Contender], sessions: int) -> None:
    for c in contenders:
        if c.missing is not None or c.turn is None:
            continue
        if c.prepare:
            c.prepare(sessions)
        kept: list[Any] = []
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for i in range(sessions):
            kept.append(await c.turn(i))
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        c.session_bytes = (after - before) / sessions
        del kept


def _once_ms(cmd: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, timeout=60)
    return (time.perf_counter() - started) * 1000


def startup(runs: int) -> dict[str, float]:
    """Best of `runs` for each command, run in rotation so that load changes hit all three."""
    exe = sys.executable
    script = Path(exe).parent / "duckflow"
    help_cmd = [str(script), "--help"] if script.exists() else (
        [found, "--help"] if (found := shutil.which("duckflow")) else [exe, "-m", "duckflow", "--help"])
    cmds = {"baseline": [exe, "-c", "pass"], "import": [exe, "-c", "import duckflow"], "help": help_cmd}
    best = dict.fromkeys(cmds, float("inf"))
    for _ in range(runs):
        for key, cmd in cmds.items():
            best[key] = min(best[key], _once_ms(cmd))
    base = best["baseline"]
    return {"baseline_ms": base, "import_ms": best["import"], "import_net_ms": best["import"] - base,
            "help_ms": best["help"], "help_net_ms": best["help"] - base}


def bar(name: str, value: float | None, limit: float | None, unit: str = "ms") -> dict[str, Any]:
    ok = None if value is None or limit is None else value <= limit
    return {"bar": name, "value": value, "limit": limit, "unit": unit,
            "result": "not measured" if ok is None else ("PASS" if ok else "FAIL")}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="duckflow bench engine", description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--turns", type=int, default=100, help="turns per framework per round")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds")
    parser.add_argument("--sessions", type=int, default=100, help="live sessions for the memory figure")
    parser.add_argument("--startup-runs", type=int, default=10, help="subprocess runs (best of)")
    args = parser.parse_args(argv)

    contenders = [duckflow_contender(), *pydantic_ai_contenders(), openai_agents_contender()]
    asyncio.run(measure_turns(contenders, args.turns, args.rounds, warmup=10))
    asyncio.run(measure_memory(contenders, args.sessions))
    start = startup(args.startup_runs)

    ours = contenders[0].median_ms
    others = [c.median_ms for c in contenders[1:] if c.median_ms is not None]
    fastest = min(others) if others else None
    bars = [
        bar("overhead per turn <= 1/3 of the faster other framework", ours,
            fastest * OVERHEAD_RATIO if fastest is not None else None),
        bar("python -c 'import duckflow' (net of baseline)", start["import_net_ms"], IMPORT_BAR_MS),
        bar("duckflow --help (net of baseline)", start["help_net_ms"], HELP_BAR_MS),
    ]
    report = {
        "turn": "scripted model -> one tool call (sync add) -> tool -> final answer",
        "turns_timed": args.turns * args.rounds,
        "frameworks": [{"name": c.name, "median_ms_per_turn": c.median_ms,
                        "mean_ms_per_turn": statistics.fmean(c.times) * 1000 if c.times else None,
                        "bytes_per_live_session": c.session_bytes, "missing": c.missing}
                       for c in contenders],
        "startup": start,
        "bars": bars,
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        _print_human(report, contenders)
    return 1 if any(b["result"] == "FAIL" for b in bars) else 0


def _print_human(report: dict[str, Any], contenders: list[Contender]) -> None:
    print(f"duckflow bench engine: {report['turn']}; {report['turns_timed']} timed turns each")
    print(f"  {'framework':34} {'median/turn':>12} {'mean/turn':>11} {'memory/live session':>20}")
    for f in report["frameworks"]:
        if f["missing"]:
            print(f"  {f['name']:34} not measured ({f['missing']})")
            continue
        mem = f"{f['bytes_per_live_session'] / 1024:.1f} KiB" if f["bytes_per_live_session"] else "-"
        print(f"  {f['name']:34} {f['median_ms_per_turn']:9.3f} ms {f['mean_ms_per_turn']:8.3f} ms {mem:>20}")
    s = report["startup"]
    print(f"  startup (best of N): python -c pass {s['baseline_ms']:.1f} ms; import duckflow "
          f"{s['import_ms']:.1f} ms (net {s['import_net_ms']:.1f}); duckflow --help "
          f"{s['help_ms']:.1f} ms (net {s['help_net_ms']:.1f})")
    print("bars:")
    for b in report["bars"]:
        value = "-" if b["value"] is None else f"{b['value']:.2f} {b['unit']}"
        limit = "-" if b["limit"] is None else f"{b['limit']:.2f} {b['unit']}"
        print(f"  {b['bar']}: {value} (limit {limit}) {b['result']}")
