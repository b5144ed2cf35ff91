"""The eval set's measure: agreement with intended levels, and whether the reasons can be acted on.

`python -m tests.apps.smartao.eval_set --model local:default [--mode steps|whole]` evaluates the
essays of `eval_essays.py` with the real EvalAgent (slow on the bundled model: run it alone) and
prints one JSON row per essay on stderr, then the summary: exact and within-one agreement per
criterion (and on the original six), the lopsided essays told apart from the average one of
their language on the criteria where they differ, and of the reasons shown: the share that
quote the essay correctly (each quote is the essay's text on the line it names), point at the
sentences a good reason must, are in the essay's language, contradict their level, or repeat
another criterion's words; "could not be judged" counts; seconds per essay.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from typing import Any

from tests.apps.smartao.eval_essays import ORIGINAL, SET

CRITERIA = ("motivation", "evidence", "reflection", "fit", "expression")


def agreement(intended: dict[str, int], got: dict[str, Any]) -> tuple[int, int]:
    """(criteria with the same level, criteria within one level)."""
    exact = sum(1 for c in CRITERIA if got.get(c) is not None and got[c] == intended[c])
    near = sum(1 for c in CRITERIA if got.get(c) is not None and abs(got[c] - intended[c]) <= 1)
    return exact, near


def reason_checks(item: dict[str, Any], scores: list[dict[str, Any]]) -> dict[str, dict[str, bool]]:
    """Per shown reason: grounded, points right, in the essay's language, contradicts, repeats."""
    from duckflow.apps.smartao.evidence import denies, in_language, own_sentences

    text, lang = item["text"], item["lang"]
    lines = text.splitlines()
    shown = [s for s in scores if s.get("level") is not None]
    out: dict[str, dict[str, bool]] = {}
    for s in shown:
        quotes = s.get("quotes") or []
        grounded = bool(quotes) and all(0 < q["line"] <= len(lines) and q["text"] in lines[q["line"] - 1]
                                        for q in quotes)
        points = item["points"][s["criterion"]]
        own = f"{s['reason']} {s.get('to_next', '')}"
        for q in quotes:
            own = own.replace(q["text"], " ")
        judged = s["reason"].split(" — ", 1)[-1]
        shows = re.split(r" Missing: |足りないもの: ", judged)[0]  # what is there (what is missing may say "no …")
        mine = own_sentences(judged)
        others = set().union(*[own_sentences(o["reason"].split(" — ", 1)[-1]) for o in shown
                               if o is not s and o.get("by") == "model"]) if s.get("by") == "model" else set()
        top_half = s["level"] >= 3
        out[s["criterion"]] = {
            "grounded": grounded,
            "points_right": any(p in q["text"] for q in quotes for p in points),
            "language": in_language(own, lang),
            "contradiction": top_half and denies(shows, lang),
            "repeated": bool(mine & others),
        }
    return out


def told_apart(rows: list[dict[str, Any]]) -> tuple[int, int]:
    """(criteria told apart, criteria where a lopsided essay's intended level differs from its average's)."""
    by_id = {r["id"]: r for r in rows}
    hit = total = 0
    for item in SET:
        avg = item.get("average")
        if not avg or avg not in by_id or item["id"] not in by_id:
            continue
        base = next(i for i in SET if i["id"] == avg)
        for c in CRITERIA:
            want = item["levels"][c] - base["levels"][c]
            if want == 0:
                continue
            total += 1
            a, b = by_id[item["id"]]["got"].get(c), by_id[avg]["got"].get(c)
            if a is not None and b is not None and (a - b) * want > 0:
                hit += 1
    return hit, total


async def measure(model_name: str, mode: str = "auto", only: list[str] | None = None,
                  verbose: bool = False) -> dict[str, Any]:
    from duckflow.apps.smartao.ask import AgentLog
    from duckflow.apps.smartao.coordinator import copied_spans
    from duckflow.apps.smartao.eval_agent import EvalAgent
    from duckflow.apps.smartao.guard import GuardAgent
    from duckflow.apps.smartao.refs import Reference
    from duckflow.companion.models import load_model
    from duckflow.config import load_config

    model = load_model(model_name, load_config())
    rows = []
    for item in SET:
        if only and item["id"] not in only:
            continue
        start = time.monotonic()
        copied = None
        if item.get("refs"):
            guard = GuardAgent([Reference(n, t) for n, t in item["refs"]])
            copied = copied_spans(item["text"], guard.check(item["text"]))
        try:
            log = AgentLog(progress=lambda m, i=item["id"]: print(f"  {i}: {m}", file=sys.stderr, flush=True))
            if verbose:  # each answer as it ends, to see what the model says
                base = log.on_chunk
                log.on_chunk = lambda c, base=base: (base(c), c.type == "done" and print(  # type: ignore[method-assign]
                    f"    answer: {c.data.text[:300]}", file=sys.stderr, flush=True))
            ev = await EvalAgent(model, mode=mode).run(item["text"], session=f"set:{item['id']}", log=log,
                                                       copied=copied)
            scores, error = ev.scores, None
        except Exception as exc:  # a failed evaluation counts as no agreement, and is shown
            scores, error = [], str(exc).splitlines()[0][:200]
        got = {s["criterion"]: s["level"] for s in scores}
        exact, near = agreement(item["levels"], got)
        rows.append({"id": item["id"], "intended": item["levels"], "got": got, "exact": exact, "within_one": near,
                     "seconds": round(time.monotonic() - start, 1), "error": error,
                     "checks": reason_checks(item, scores),
                     "reasons": {s["criterion"]: [s["reason"], s.get("to_next", "")] for s in scores}})
        print(json.dumps(rows[-1], ensure_ascii=False), file=sys.stderr, flush=True)
    return summary(model_name, mode, rows)


def summary(model_name: str, mode: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    original = {i["id"] for i in ORIGINAL}
    per: dict[str, dict[str, int]] = {}
    for c in CRITERIA:
        per[c] = {"exact": sum(1 for r in rows if r["got"].get(c) == r["intended"][c]),
                  "within_one": sum(1 for r in rows if r["got"].get(c) is not None
                                    and abs(r["got"][c] - r["intended"][c]) <= 1)}
    checks = [ch for r in rows for ch in r["checks"].values()]
    shown = len(checks)

    def share(key: str) -> float:
        return round(sum(1 for ch in checks if ch[key]) / shown, 3) if shown else 0.0

    apart, differ = told_apart(rows)
    return {"model": model_name, "mode": mode, "essays": len(rows), "criteria": len(rows) * len(CRITERIA),
            "exact": sum(r["exact"] for r in rows), "within_one": sum(r["within_one"] for r in rows),
            "original_six_exact": sum(r["exact"] for r in rows if r["id"] in original),
            "per_criterion": per, "lopsided_told_apart": f"{apart}/{differ}",
            "reasons_shown": shown, "not_judged": sum(1 for r in rows for v in r["got"].values() if v is None),
            "grounded": share("grounded"), "points_right": share("points_right"), "in_language": share("language"),
            "contradictions": sum(1 for ch in checks if ch["contradiction"]),
            "repeated": sum(1 for ch in checks if ch["repeated"]),
            "failed": sum(1 for r in rows if r["error"]),
            "seconds_per_essay": round(sum(r["seconds"] for r in rows) / len(rows), 1) if rows else 0.0,
            "rows": [{k: r[k] for k in ("id", "intended", "got", "exact", "seconds", "error")} for r in rows]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="local:default")
    parser.add_argument("--mode", default="auto", choices=("auto", "steps", "whole"))
    parser.add_argument("--only", nargs="*", help="essay ids to run (default: all)")
    parser.add_argument("--verbose", action="store_true", help="print each model answer on stderr")
    args = parser.parse_args()
    out = asyncio.run(measure(args.model, args.mode, args.only, args.verbose))
    print(json.dumps(out, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
