"""The bars of `duckflow bench protocols` (issue 9): ratios against baselines run in the same process.

- `json_baselines`: Sym-Ops parse against `json.loads` of the same actions as JSON, and the
  repair path against `json_repair.loads` of the same actions as damaged JSON (information).
- `streaming`: 1 MB of prose, 1 MB of actions and one 1 MB block, in 16-byte pieces through
  the engine's reader (core `FreeTextStreamer` + `SymOpsCodec`) against the one-shot decode:
  time ≤ 3× (the median of the ratios of pairs timed back to back), and peak memory
  (tracemalloc) ≤ 2× the one-shot read's peak.
- `noise`: generated valid replies wrapped in noise; runnable actions not in the reply: 0.
- `compliance`: real model replies (tests/corpus/real), per stage: well-formed, intended
  actions obtained, runnable guesses (0).
"""

from __future__ import annotations

import functools
import gc
import json
import random
import statistics
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks._ratio import best_of


def _best(fn: Callable[[], Any], repeat: int) -> float:
    return best_of(fn, repeat)


def _interleaved(a: Callable[[], Any], b: Callable[[], Any], repeat: int) -> tuple[list[float], list[float]]:
    """`repeat` times of `a` and of `b`, run alternately (back to back, so each pair sees the
    same load; the order flips every repetition), each with the collector off as `timeit` does."""
    ta: list[float] = []
    tb: list[float] = []
    for i in range(repeat):
        if i % 2:
            tb.append(_best(b, 1))
            ta.append(_best(a, 1))
        else:
            ta.append(_best(a, 1))
            tb.append(_best(b, 1))
    return ta, tb


def _ratio_figures(ta: list[float], tb: list[float]) -> dict[str, Any]:
    """The median of the paired ratios (the figure a bar holds), with min, max and best/best."""
    from benchmarks._ratio import paired_ratio

    r = paired_ratio(ta, tb)
    return {"value": r["median"], "min": r["min"], "max": r["max"], "best_ratio": round(min(ta) / min(tb), 2)}


def _peak(fn: Callable[[], Any]) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def json_baselines(canonical: str, actions: list[dict[str, Any]], damaged: str, repeat: int) -> dict[str, Any]:
    """Sym-Ops against JSON readers on the same actions (ratios; no bar: for information)."""
    import json_repair

    from duckflow.protocols.symops import parse

    as_json = json.dumps({"actions": actions})
    fixed = [{"type": a.type, "path": a.path, "content": a.content} for a in parse(damaged).actions]
    # the damaged reply's actions as JSON damaged the usual ways: fenced, prose before, single
    # quotes, a trailing comma and the closing brackets cut off
    broken_json = ("Sure! Here it is:\n```json\n" + json.dumps({"actions": fixed})[:-2].replace('"type"', "'type'")
                   + ",\n```\n")  # fmt: skip
    t_sym, t_json = _interleaved(lambda: parse(canonical), lambda: json.loads(as_json), repeat)
    t_rep, t_jrep = _interleaved(lambda: parse(damaged), lambda: json_repair.loads(broken_json), repeat)
    med = statistics.median
    return {
        "parse_vs_json_loads": {**_ratio_figures(t_sym, t_json), "bar": "information", "pass": None,
                                "symops_ms": round(med(t_sym) * 1000, 2), "json_ms": round(med(t_json) * 1000, 2)},
        "repair_vs_json_repair": {**_ratio_figures(t_rep, t_jrep), "bar": "information", "pass": None,
                                  "symops_ms": round(med(t_rep) * 1000, 2),
                                  "json_repair_ms": round(med(t_jrep) * 1000, 2)},
    }  # fmt: skip


def _engine_read(text: str, pieces: list[str]) -> Any:
    from duckflow.core.text_stream import FreeTextStreamer
    from duckflow.protocols.symops import SymOpsCodec

    shown: list[str] = []
    st = FreeTextStreamer(SymOpsCodec(), [], shown.append, on_action=lambda _a: None)
    for p in pieces:
        st.feed(p)
    return st.decode(text)


def _one_shot(text: str) -> Any:
    from duckflow.protocols.symops import SymOpsCodec

    return SymOpsCodec().decode(text, [])


def streaming(actions_text: str, prose_text: str, repeat: int) -> dict[str, Any]:
    """Engine reader in 16-byte pieces vs one-shot decode: many actions, prose, one large block."""
    out: dict[str, Any] = {}
    size = len(actions_text)
    body = "\n".join(f"value_{i} = {i * 7}  # a generated line of one large file" for i in range(size // 48))
    block_text = f"~ one large file\n$ create @ big.py\n--\n{body}\n--\n"
    for name, text in (("actions", actions_text), ("prose", prose_text), ("large_block", block_text)):
        pieces = [text[i : i + 16] for i in range(0, len(text), 16)]
        one = functools.partial(_one_shot, text)
        streamed = functools.partial(_engine_read, text, pieces)
        t_one, t_stream = _interleaved(one, streamed, repeat)
        figures = _ratio_figures(t_stream, t_one)
        ratio = figures["value"]
        # one large block is read one-shot by a single str.find at C speed; streamed, each of its
        # 75,000 pieces costs one Python call (~0.5 us): shown for information, not a bar
        bar = "<= 3" if name != "large_block" else "information"
        out[f"stream_{name}_time_ratio"] = {**figures, "bar": bar,
                                            "pass": ratio <= 3 if bar != "information" else None,
                                            "bytes": len(text.encode()), "pieces": len(pieces),
                                            "one_shot_ms": round(statistics.median(t_one) * 1000, 1),
                                            "stream_ms": round(statistics.median(t_stream) * 1000, 1)}  # fmt: skip
        m_one = _peak(one)
        m_stream = _peak(streamed)
        mem = m_stream / max(1, m_one)
        out[f"stream_{name}_memory_ratio"] = {"value": round(mem, 2), "bar": "<= 2", "pass": mem <= 2,
                                              "peak_over_input": round(m_stream / len(text.encode()), 2),
                                              "one_shot_peak_over_input": round(m_one / len(text.encode()), 2)}  # fmt: skip
    return out


def noise(count: int, seed: int = 9) -> dict[str, Any]:
    """`count` valid replies in noise: runnable actions not in the reply (bar 0), and how many
    variants kept exactly the reply's runnable actions (information)."""
    from duckflow.protocols.symops import parse
    from duckflow.protocols.symops.noise import (
        NOISE_KINDS,
        noisy_reply,
        random_valid_reply,
        unintended,
    )

    rng = random.Random(seed)
    extra = same = 0
    examples: list[str] = []
    started = time.perf_counter()
    for _ in range(count):
        valid = random_valid_reply(rng)
        kinds = rng.sample(NOISE_KINDS, rng.randint(1, 3))
        noisy = noisy_reply(valid, rng, kinds)
        truth, got = parse(valid), parse(noisy)
        bad = unintended(truth, got)
        if bad:
            extra += len(bad)
            if len(examples) < 3:
                examples.append(noisy[:300])
        elif [a.key() for a in got.actions if a.executable] == [a.key() for a in truth.actions if a.executable]:
            same += 1
    return {"noise_runnable_not_in_reply": {
        "value": extra, "bar": "0", "pass": extra == 0, "variants": count,
        "same_actions_share": round(same / count, 4) if count else None,
        "seconds": round(time.perf_counter() - started, 1), "examples": examples}}


def _stage_row(results: list[tuple[Any, list[Any], list[tuple[str, str]], list[str]]]) -> dict[str, Any]:
    """One row: per stage, the share of replies well-formed there and the share whose intended
    actions were obtained exactly by then; runnable guesses over every reply read.

    strict / repaired: every intended action is among the runnable ones; fuzzy: among the
    runnable ones or the proposals a person would confirm; self-correct: the first reply of the
    re-asks that reads cleanly (only when re-asked replies were recorded). A runnable guess is a
    runnable action whose line in the reply does not declare it (verb and target); actions the
    model declared beyond the intended ones are counted apart (`extra_declared`)."""
    n = len(results)
    stages = ("strict", "repaired", "fuzzy", "self_correct")
    well = dict.fromkeys(stages, 0)
    exact = dict.fromkeys(stages, 0)
    runnable_guesses = 0
    recorded_reasks = any(reasks for _res, reasks, _i, _t in results)

    def runnable(res: Any) -> list[tuple[str, str]]:
        return sorted((a.type, a.path or "") for a in res.actions if a.executable)

    def has(got: list[tuple[str, str]], want: list[tuple[str, str]]) -> bool:
        """Every intended action is there, as written (extra declared ones are counted apart)."""
        return not (Counter(want) - Counter(got))

    extra_declared = 0
    for res, reasks, intended, texts in results:
        want = sorted(intended)
        for r, text in zip((res, *reasks), texts, strict=True):
            lines = text.replace("\r\n", "\n").split("\n")
            for a in r.actions:
                if not a.executable:
                    continue
                line = lines[a.line - 1] if 0 < a.line <= len(lines) else ""
                if a.verb not in line or (a.path or "") not in line:
                    runnable_guesses += 1  # runs, but its line in the reply does not declare it
                elif (a.type, a.path or "") not in intended:
                    extra_declared += 1
        proposed = sorted({(a.type, a.path or "") for a in res.actions})
        stage = res.stage
        well["strict"] += stage == "strict"
        well["repaired"] += stage in ("strict", "repaired") and res.ok
        well["fuzzy"] += stage != "failed"
        exact["strict"] += stage == "strict" and has(runnable(res), want)
        exact["repaired"] += stage in ("strict", "repaired") and has(runnable(res), want)
        exact["fuzzy"] += has(runnable(res), want) or has(proposed, want)
        used = next((r for r in (res, *reasks) if r.ok), (res, *reasks)[-1])
        well["self_correct"] += used.ok
        exact["self_correct"] += used.ok and has(runnable(used), want)

    def share(k: int) -> float | None:
        return round(k / n, 3) if n else None

    row: dict[str, Any] = {"replies": n, "runnable_guesses": runnable_guesses, "extra_declared": extra_declared,
                           "stages": {s: {"well_formed": share(well[s]), "exact_intended": share(exact[s])}
                                      for s in stages[:3]}}  # fmt: skip
    if recorded_reasks or all(res.ok for res, _r, _i, _t in results):
        row["stages"]["self_correct"] = {"well_formed": share(well["self_correct"]),
                                         "exact_intended": share(exact["self_correct"])}  # fmt: skip
        row["self_correct"] = ("what the live loop runs: a reply with errors is re-asked (≤ 2, recorded); "
                               "one still unreadable runs nothing")
    else:
        row["self_correct"] = "not measured: needs the model's re-asked replies (none recorded)"
    return row


def compliance(root: Path) -> dict[str, Any]:
    """The per-stage table for every folder of real replies under `root` (one row each)."""
    from duckflow.protocols.symops import parse

    if not root.is_dir():
        return {"compliance": {"value": None, "bar": "runnable guesses = 0", "pass": None,
                               "note": f"not measured: {root} does not exist"}}  # fmt: skip
    rows: dict[str, Any] = {}
    total_guesses = 0
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        results = []
        sources = set()
        for txt in sorted(p for p in folder.glob("*.txt") if ".reask" not in p.name):
            meta = json.loads(txt.with_suffix(".json").read_text("utf-8"))
            intended = [(i["type"], i["path"]) for i in meta.get("intended", [])]
            request = meta.get("request")
            texts = [txt.read_text("utf-8")]
            texts += [r.read_text("utf-8") for r in sorted(folder.glob(f"{txt.stem}.reask*.txt"))]
            reasks = [parse(t, request=request) for t in texts[1:]]
            results.append((parse(texts[0], request=request), reasks, intended, texts))
            sources.add(meta.get("source", "").split("/blob/")[0].split(" with `")[0])
        row = _stage_row(results)
        row["sources"] = sorted(s for s in sources if s)
        rows[folder.name] = row
        total_guesses += row["runnable_guesses"]
    note = "" if (root / "local").is_dir() else (
        "replies of the bundled local model: not recorded (`python -m benchmarks._record local:default "
        "tests/corpus/real/local` records them)")
    return {"compliance": {"value": total_guesses, "bar": "runnable guesses = 0", "pass": total_guesses == 0,
                           "rows": rows, "note": note}}  # fmt: skip
