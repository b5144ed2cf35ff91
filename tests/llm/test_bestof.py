"""Best of a few: n candidates with other seeds, the one a no-person check scores highest wins."""

from __future__ import annotations

import asyncio

from benchmarks._compliance_tasks import TASKS
from benchmarks.compliance import Bench

from duckflow.llm.bestof import BestOfModel
from duckflow.llm.scripted import ScriptedModel, reply
from duckflow.llm.types import Message, ModelSettings, TextDelta, UsageEvent

HELLO = next(t for t in TASKS if t.name == "hello")
GOOD = ('~ write it\n#c0.9 #m0.8 #f0.9 #s0.9\n$ create @ hello.py\n---\nprint("Hello, World!")\n---\n'
        "$ run @ python3 hello.py\n~ next: DONE\n")
MESSY = 'Sure! Here is the file:\n\n```python\nprint("Hello, World!")\n```\n'


async def _events(model: BestOfModel) -> list[object]:
    settings = ModelSettings(temperature=0.0, max_tokens=50, extra={"seed": 7})
    return [ev async for ev in model.stream([Message("user", "hi")], settings=settings)]


def test_the_best_scored_candidate_is_the_answer_and_usage_is_the_sum() -> None:
    inner = ScriptedModel([reply("short"), reply("the longest reply"), reply("medium one")], name="s")
    best = BestOfModel(inner, 3, score=len)
    events = asyncio.run(_events(best))
    texts = [e.text for e in events if isinstance(e, TextDelta)]
    assert texts == ["the longest reply"] and best.last_scores == [5.0, 17.0, 10.0]
    seeds = [r.settings.extra["seed"] for r in inner.requests if r.settings is not None]
    temps = [r.settings.temperature for r in inner.requests if r.settings is not None]
    assert seeds == [7, 8, 9] and temps == [0.0, 0.7, 0.7]  # the first as asked, the others differ
    (usage,) = [e.usage for e in events if isinstance(e, UsageEvent)]
    one = asyncio.run(_events(BestOfModel(ScriptedModel([reply("short")], name="s"), 1, score=len)))
    (single,) = [e.usage for e in one if isinstance(e, UsageEvent)]
    assert usage.prompt_tokens == 3 * single.prompt_tokens > 0  # the wait cost all three


def test_a_tie_keeps_the_first_candidate() -> None:
    inner = ScriptedModel([reply("a"), reply("b")], name="s")
    best = BestOfModel(inner, 2, score=lambda _: 1.0)
    events = asyncio.run(_events(best))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["a"]


def test_the_live_bench_with_best_of_three_proposes_the_reply_that_parses() -> None:
    # each step: a messy reply first, then a well-formed one; the check picks the one that parses
    model = ScriptedModel([reply(MESSY), reply(GOOD), reply(MESSY)] * 4, name="bench")
    bench = Bench("scripted:bench", ["symops"], ["single-call"], [HELLO], stages="live", best_of=3)
    asyncio.run(bench.run(model, lambda _: None))
    (cell,) = bench.result()["cells"]
    assert cell["passed"] == 1 and cell["well_formed"] == 1
    (row,) = bench.result()["timing"]
    assert row["best_of"] == 3 and row["summary"]["passed"] == 1
    plain = Bench("scripted:bench", ["symops"], ["single-call"], [HELLO], stages="live")
    asyncio.run(plain.run(ScriptedModel([reply(MESSY)] * 12, name="bench"), lambda _: None))
    assert plain.result()["cells"][0]["passed"] == 0  # the messy reply alone does not pass
