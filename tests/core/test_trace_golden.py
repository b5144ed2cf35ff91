"""Golden-file test: the JSONL trace of a scripted run, times and durations normalised.

Regenerate after an intended change with `DUCKFLOW_UPDATE_GOLDEN=1 pytest tests/core/test_trace_golden.py`
and review the diff of tests/core/golden/.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from duckflow.core.agent import Agent
from duckflow.core.guardrails import Guardrail
from duckflow.core.session import Session
from duckflow.llm.scripted import ScriptedModel, reply, tool_call, tool_calls
from duckflow.llm.types import Usage

GOLDEN = Path(__file__).parent / "golden" / "scripted_run.trace.jsonl"
trace_mod = pytest.importorskip("duckflow.core.trace")


def normalise(record: dict[str, Any]) -> dict[str, Any]:
    out = dict(record)
    out["time"] = "<time>"
    if "duration_ms" in out:
        out["duration_ms"] = "<ms>"
    return out


async def scripted_run(path: Path) -> list[dict[str, Any]]:
    async def lookup(key: str) -> str:
        """Look a key up."""
        return {"tea": "green"}.get(key, "unknown")

    writer = Agent("writer", "Write one line.", model=ScriptedModel([
        reply("Green tea, gently.", usage=Usage(12, 5))]))
    boss_model = ScriptedModel([
        tool_calls([("lookup", {"key": "tea"}), ("lookup", {"key": 3})], usage=Usage(30, 12)),
        tool_call("handoff_to_writer", input="a line about green tea"),
        reply("Done: Green tea, gently.", usage=Usage(60, 8)),
    ])
    boss_model.steps[1].usage = Usage(45, 9)  # type: ignore[union-attr]
    trace = trace_mod.TraceLogger(path, otlp_endpoint="")
    boss = Agent("boss", "Coordinate.", model=boss_model, tools=[lookup], handoffs=[writer],
                 guardrails=[Guardrail(name="polite", regex_blocks=[r"(?i)\bidiot\b"])], trace=trace)
    result = await boss.run("write about tea", session=Session("golden-session"))
    trace.close()
    assert result.ok and result.text == "Done: Green tea, gently."
    return [normalise(json.loads(line)) for line in path.read_text().splitlines()]


async def test_trace_of_a_scripted_run_matches_the_golden_file(tmp_path: Path) -> None:
    records = await scripted_run(tmp_path / "trace.jsonl")
    if os.environ.get("DUCKFLOW_UPDATE_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    expected = [json.loads(line) for line in GOLDEN.read_text().splitlines()]
    assert records == expected


async def test_trace_covers_every_engine_event(tmp_path: Path) -> None:
    records = await scripted_run(tmp_path / "trace.jsonl")
    events = {r["event"] for r in records}
    assert {"agent_start", "agent_end", "llm_call", "tool_start", "tool_end", "handoff_start",
            "handoff_end", "guardrail", "error"} <= events
    assert all(r["session"] == "golden-session" for r in records)
    ends = [r for r in records if r["event"] == "agent_end"]
    assert [(r["agent"], r["tok_prompt"], r["tok_completion"]) for r in ends] == [
        ("writer", 12, 5), ("boss", 135, 29)]
    from duckflow.core.run import count_text_tokens

    tools = [r for r in records if r["event"] == "tool_end"]  # the arguments written, the result read
    assert tools and all(r["tok_prompt"] > 0 and r["tok_completion"] > 0 for r in tools)
    assert tools[0]["tok_completion"] == count_text_tokens("green")
    assert tools[0]["tok_prompt"] == count_text_tokens('{"key": "tea"}')
