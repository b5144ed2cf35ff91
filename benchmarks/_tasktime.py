"""Where a benched task's wall time goes: per model call (prompt tokens, evaluated, TTFT), per task, per model.

`Recorder` wraps the benched model (deterministic settings) and keeps every reply's text and
its `CallTimes`: the prompt
tokens, how many llama.cpp evaluated (the rest reused from the KV cache), its own prompt and
generation milliseconds, the time to the first text and the call's wall time. `TaskTime`
is one live task (wall time, the model's share, whether the run's result says it was checked).
`summary` turns the tasks of one bench cell into the report's row: pass rate, median wall time
per task, Duckflow's share (the wall time not spent inside model calls: the loop, the gate, the
tools and the checks it runs), calls per task, median prompt and evaluated tokens per call, and
the median ratio of time to first token over the model's own prompt-processing time.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from duckflow.llm.types import Message, ModelEvent, ModelSettings, TextDelta, ToolSpec, UsageEvent


@dataclass
class CallTimes:
    prompt_tokens: int = 0
    evaluated: int = 0
    prompt_ms: float = 0.0
    gen_ms: float = 0.0
    load_ms: float = 0.0
    generated: int = 0
    first_ms: float = 0.0  # the call's start to its first text
    wall_ms: float = 0.0


class Recorder:
    """Wraps a model and keeps the text of every reply (the wrapped model decides backend and size)."""

    def __init__(self, inner: Any) -> None:
        self.models = [inner]
        self.name = inner.name
        self.supports_tools = inner.supports_tools
        self.is_local = inner.is_local
        self.replies: list[str] = []
        self.times: list[CallTimes] = []

    async def stream(self, messages: Sequence[Message], *, tools: Sequence[ToolSpec] = (),
                     settings: ModelSettings | None = None) -> AsyncIterator[ModelEvent]:
        if settings is not None:
            # deterministic runs: seed 0 (unless the loop gives its own: a re-ask sampling again) and
            # the temperature the loop asks for (the product's own: low for a constrained local
            # call, raised for such a re-ask), 0 where it names none
            settings = ModelSettings(temperature=0.0 if settings.temperature is None else settings.temperature,
                                     max_tokens=settings.max_tokens, timeout_s=settings.timeout_s,
                                     extra={"seed": 0, **settings.extra})
        parts: list[str] = []
        t = CallTimes()
        t0 = time.perf_counter()
        try:
            async for ev in self.models[0].stream(messages, tools=tools, settings=settings):
                if isinstance(ev, TextDelta):
                    parts.append(ev.text)
                    t.first_ms = t.first_ms or (time.perf_counter() - t0) * 1000
                elif isinstance(ev, UsageEvent):
                    u = ev.usage
                    t.prompt_tokens, t.evaluated, t.generated = u.prompt_tokens, u.prompt_eval_tokens, u.completion_tokens
                    t.prompt_ms, t.gen_ms, t.load_ms = u.prompt_ms, u.gen_ms, u.load_ms
                yield ev
        finally:
            self.replies.append("".join(parts))
            t.wall_ms = (time.perf_counter() - t0) * 1000
            self.times.append(t)


@dataclass
class TaskTime:
    task: str
    passed: bool
    wall_s: float
    model_s: float
    checked: str  # the run's ending: done | not_done | not_verified | n/a (it ended otherwise)
    calls: list[CallTimes] = field(default_factory=list)

    def row(self) -> dict[str, Any]:
        return {**{k: v for k, v in asdict(self).items() if k != "calls"},
                "calls": [asdict(c) for c in self.calls]}


ENDINGS = ("done", "not_done", "not_verified", "n/a")


def checked_of(outcome: Any) -> str:
    """The ending the run said (`TaskOutcome.result.kind`: done, not_done, not_verified), or n/a
    when it ended otherwise (an approval, the budget, an error)."""
    kind = getattr(getattr(outcome, "result", None), "kind", None)
    return kind if kind in ENDINGS else "n/a"


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 3) if values else 0.0


def summary(tasks: list[TaskTime]) -> dict[str, Any]:
    """One row of the report for the tasks of a cell."""
    n = len(tasks)
    calls = [c for t in tasks for c in t.calls]
    wall = sum(t.wall_s for t in tasks)
    own = sum(max(0.0, t.wall_s - t.model_s) for t in tasks)
    ttft = [c.first_ms / (c.prompt_ms + c.load_ms) for c in calls if c.first_ms and c.prompt_ms > 0]
    return {
        "tasks": n, "passed": sum(t.passed for t in tasks),
        "pass_rate": round(sum(t.passed for t in tasks) / n, 3) if n else 0.0,
        "median_wall_s": _median([t.wall_s for t in tasks]),
        "duckflow_share": round(own / wall, 3) if wall else 0.0,
        "calls_per_task": round(len(calls) / n, 2) if n else 0.0,
        "median_prompt_tokens": _median([float(c.prompt_tokens) for c in calls]),
        "median_evaluated_tokens": _median([float(c.evaluated) for c in calls]),
        "median_generated_tokens": _median([float(c.generated) for c in calls]),
        "prompt_s": round(sum(c.prompt_ms for c in calls) / 1000, 1),
        "generation_s": round(sum(c.gen_ms for c in calls) / 1000, 1),
        "median_ttft_over_prompt": _median(ttft),
        "checked": {k: sum(t.checked == k for t in tasks) for k in ENDINGS},
        "done_on_a_failure": sum(t.checked == "done" and not t.passed for t in tasks),
    }


def report_table(rows: list[dict[str, Any]]) -> str:
    """The merged report: one line per model and cell (markdown)."""
    lines = ["| model | protocol · mode · stage | pass | median s/task | Duckflow share | calls/task "
             "| prompt tok/call (evaluated) | TTFT / prompt time | endings done/not done/not verified "
             "(\"Done\" on a failure) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        s = r["summary"]
        c = s["checked"]
        checked = ("n/a" if c["n/a"] == s["tasks"] else
                   f"{c['done']}/{c['not_done']}/{c['not_verified']} ({s['done_on_a_failure']})")
        timed = s["prompt_s"] > 0  # an in-process model reports its own prompt time
        lines.append(
            f"| {r['model']}{' best of ' + str(r['best_of']) if r.get('best_of', 1) > 1 else ''} | {r['protocol']} · {r['mode']} · {r['stage']} | {s['passed']}/{s['tasks']} | "
            f"{s['median_wall_s']:.1f} | {s['duckflow_share']:.1%} | {s['calls_per_task']} | "
            f"{s['median_prompt_tokens']:.0f} ({timed and format(s['median_evaluated_tokens'], '.0f') or '—'}) | "
            f"{timed and format(s['median_ttft_over_prompt'], '.2f') + '×' or '—'} | {checked} |")
    return "\n".join(lines)


def table(result: dict[str, Any]) -> str:
    lines = ["| protocol | mode | stage | well-formed | exact intended | check passes | runnable guesses "
             "| output tokens | seconds |", "|---|---|---|---|---|---|---|---|---|"]
    for row in result["cells"]:
        n = row["tasks"]
        lines.append(f"| {row['protocol']} | {row['mode']} | {row['stage']} | {row['well_formed']}/{n} | "
                     f"{row['exact']}/{n} | {row['passed']}/{n} | {row['runnable_guesses']} | "
                     f"{row['out_tokens']} | {row['seconds']} |")
    return "\n".join(lines)


def recorded_table(found: dict[str, Any]) -> str:
    """The replayed real replies (tests/corpus/real, no model run): well-formed and exact per stage."""
    rows = (found.get("compliance") or {}).get("rows") or {}
    if not rows:
        return str((found.get("compliance") or {}).get("note") or "no recorded replies")
    stages = list(next(iter(rows.values()))["stages"])
    lines = ["| recorded replies (well-formed / exact intended) | " + " | ".join(stages) + " | runnable guesses |",
             "|---|" + "---|" * (len(stages) + 1)]
    for name, row in rows.items():
        cells = [f"{row['stages'][s]['well_formed']:.0%} / {row['stages'][s]['exact_intended']:.0%}" for s in stages]
        lines.append(f"| {name} ({row['replies']}) | " + " | ".join(cells) + f" | {row['runnable_guesses']} |")
    return "\n".join(lines)
