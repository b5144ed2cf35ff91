"""A small rubric-scored set for EvalAgent (written for this project) and the agreement measure.

Each essay was written to sit at an intended level (1-4) of every criterion of the bundled AO
rubric. `python -m tests.apps.smartao.eval_set --model local:default` evaluates each with the
real EvalAgent and prints, per essay and overall, how many criteria agree exactly and within
one level (slow on the bundled model: run it alone). test_eval_set.py checks the measure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from typing import Any

CRITERIA = ("motivation", "evidence", "reflection", "fit", "expression")

SET: list[dict[str, Any]] = [
    {"id": "weak", "levels": dict(motivation=1, evidence=1, reflection=1, fit=1, expression=1),
     "text": "i want go to your university. it is good univercity and famous. i like many thing , "
             "sports and game. i will do my best best in the future. thank you"},
    {"id": "generic", "levels": dict(motivation=2, evidence=2, reflection=2, fit=2, expression=2),
     "text": "I want to study economics at Midlands University because economics is important for society. "
             "In high school I was in the tennis club and the student council, and I did volunteer work. "
             "I learned many things from these activities. I think Midlands University is a good place "
             "for me. I will work hard."},
    {"id": "episode", "levels": dict(motivation=3, evidence=3, reflection=3, fit=2, expression=3),
     "text": "I want to study public health because of my grandmother's diabetes. For two years I helped her "
             "record her blood sugar every evening, and I noticed that her numbers improved when she walked "
             "after dinner. I made a simple chart for her fridge, and she started walking four times a week. "
             "From this I learned that clear information changes what people do. I hope to study public "
             "health at Northfield University."},
    {"id": "strong", "levels": dict(motivation=4, evidence=4, reflection=4, fit=4, expression=4),
     "text": "When our town's only bus line was cut in 2023, my neighbour, who is eighty, stopped going to "
             "the clinic. I surveyed forty elderly residents with my friend Kenta, presented the results to "
             "the town council, and we helped start a volunteer ride service that now makes thirty trips a "
             "month. Leading the survey taught me that data only matters when it is told as people's "
             "stories, so I now interview before I count. I want to study regional planning at Northfield "
             "University because Professor Sato's course on rural mobility and the field lab in Akita would "
             "let me test ride-sharing models for towns like mine, which is the career I plan."},
    {"id": "story-no-goal", "levels": dict(motivation=2, evidence=4, reflection=3, fit=1, expression=3),
     "text": "Last summer I organised a beach clean-up with twelve classmates. I contacted the city office, "
             "borrowed equipment, and divided the beach into zones; in one morning we collected 85 kg of "
             "plastic and reported the types to the city. I learned that a task becomes possible when it is "
             "split into small parts that people can own. I would like to go to university."},
    {"id": "goal-no-story", "levels": dict(motivation=3, evidence=1, reflection=1, fit=3, expression=3),
     "text": "I want to become a data scientist who helps hospitals reduce waiting times, because long waits "
             "stop people from getting care early. Westbrook University's statistics programme offers "
             "courses in machine learning and a hospital internship, which match this goal. I will use "
             "these to prepare for work in healthcare."},
]


def agreement(intended: dict[str, int], got: dict[str, int]) -> tuple[int, int]:
    """(criteria with the same level, criteria within one level)."""
    exact = sum(1 for c in CRITERIA if got.get(c) == intended[c])
    near = sum(1 for c in CRITERIA if c in got and abs(got[c] - intended[c]) <= 1)
    return exact, near


async def measure(model_name: str) -> dict[str, Any]:
    from duckflow.apps.smartao.ask import AgentLog
    from duckflow.apps.smartao.rubric import EvalAgent
    from duckflow.companion.models import load_model
    from duckflow.config import load_config

    model = load_model(model_name, load_config())
    rows = []
    for item in SET:
        start = time.monotonic()
        try:
            ev = await EvalAgent(model).run(item["text"], session=f"set:{item['id']}", log=AgentLog())
            got = {s["criterion"]: s["level"] for s in ev.scores}
            reasons = {s["criterion"]: [s["reason"], s.get("to_next", "")] for s in ev.scores}
            error = None
        except Exception as exc:  # a refused answer counts as no agreement, and is shown
            got, reasons, error = {}, {}, str(exc).splitlines()[0][:200]
        exact, near = agreement(item["levels"], got)
        rows.append({"id": item["id"], "intended": item["levels"], "got": got, "exact": exact, "within_one": near,
                     "seconds": round(time.monotonic() - start, 1), "error": error, "reasons": reasons})
        print(json.dumps(rows[-1], ensure_ascii=False), file=sys.stderr, flush=True)
    n = len(SET) * len(CRITERIA)
    return {"model": model_name, "essays": len(SET), "criteria": n,
            "exact": sum(r["exact"] for r in rows), "within_one": sum(r["within_one"] for r in rows),
            "refused": sum(1 for r in rows if r["error"]), "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="local:default")
    args = parser.parse_args()
    out = asyncio.run(measure(args.model))
    print(json.dumps(out, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
