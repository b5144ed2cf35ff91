"""`duckflow bench kvcache [--model local:default] [--codec symops|dml] [--json]`: KV-cache reuse.

The in-process model (`llm.local`) keeps llama.cpp's evaluated tokens between calls: a prompt
that starts with the tokens of the previous call only evaluates its new suffix (llama-cpp-python
0.3.36, `Llama.generate`'s longest-prefix match; a state cache, when one is set, is emptied for
the cold figure too). The single-call prompt is ordered for this: system
rules and the example first, then the task, the files and the results, the parts that change.

Measured on the live path's prompts (`companion.singlecall.build_step` for a real session):
step 1 of a create-and-run task is sent (a short reply), then step 2 (the file now exists and a
result is in) — its time to first token is the *warm* figure; the same step-2 prompt after the
model's state and cache are emptied is the *cold* one (same prompt, same length). The ratio
warm / cold is reported per round and as the median; each round alternates warm and cold.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from duckflow.llm.types import TextDelta

TASK = "Create hello.py that prints Hello, World! and run it"
HELLO = 'print("Hello, World!")\n'
STEP1_TOKENS = 24  # step 1's reply (its tokens follow the prompt in llama.cpp's state, as in a session)


EVALUATED: list[int] = []  # prompt tokens llama.cpp evaluated per measured call (its own counter)


async def _first_token(model: Any, messages: Any, settings: Any) -> float:
    """Seconds from the call to the first streamed text of `model` (the rest is not generated);
    the prompt tokens llama.cpp evaluated for it go to EVALUATED."""
    from duckflow.llm.local import perf_counters

    with model.generation_lock:  # a previous call cut off after its first token may still be stopping
        pass
    before = perf_counters(model.llama)
    start = time.perf_counter()
    gen = model.stream(messages, settings=settings)
    try:
        async for event in gen:
            if isinstance(event, TextDelta):
                return time.perf_counter() - start
    finally:
        await gen.aclose()
        after = perf_counters(model.llama)
        if before and after:
            EVALUATED.append(int(after["n_p_eval"] - before["n_p_eval"]))
    return time.perf_counter() - start


def _forget(model: Any) -> None:
    """Empty the model's evaluated tokens (and its state cache, if it has one): the next call starts cold."""
    llm = model.llama
    with model.generation_lock:  # after the generation a cut-off call leaves running has stopped
        llm.reset()
        cache = getattr(llm, "cache", None)
        if cache is not None:  # a fresh, empty cache of the same kind and size
            llm.set_cache(type(cache)(capacity_bytes=cache.capacity_bytes))


def _shared_prefix(model: Any, a: list[dict[str, str]], b: list[dict[str, str]]) -> tuple[int, int]:
    """(tokens the two chat prompts share at the start, tokens of the second)."""
    llm = model.llama
    ta, tb = _prompt_tokens(llm, a), _prompt_tokens(llm, b)
    shared = 0
    for x, y in zip(ta, tb, strict=False):
        if x != y:
            break
        shared += 1
    return shared, len(tb)


def _prompt_tokens(llm: Any, chat: list[dict[str, str]]) -> list[int]:
    """The prompt tokens the chat template makes of `chat` (rendered, then tokenized)."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    template = llm.metadata.get("tokenizer.chat_template")
    if template:
        eos = llm.detokenize([llm.token_eos()]).decode("utf-8", "ignore")
        bos = llm.detokenize([llm.token_bos()]).decode("utf-8", "ignore")
        rendered: Any = chat  # plain role/content dicts, as llm.local sends them
        text = Jinja2ChatFormatter(template, eos_token=eos, bos_token=bos)(messages=rendered).prompt
    else:
        text = "\n".join(m["content"] for m in chat)
    return list(llm.tokenize(text.encode("utf-8"), add_bos=True, special=True))


async def measure(model_name: str, codec: str, rounds: int, grammar: bool = True) -> dict[str, Any]:
    from duckflow.companion.factory import open_session
    from duckflow.companion.models import load_model
    from duckflow.companion.singlecall import build_step
    from duckflow.companion.store import SessionStore
    from duckflow.config import Config
    from duckflow.gate import Gate
    from duckflow.llm.constrain import constrained
    from duckflow.llm.local import to_chat_messages

    cfg = Config()
    cfg.trace.enabled = False
    model: Any = load_model(model_name, cfg)
    while getattr(model, "models", None):  # the FallbackModel around it: measure the model itself
        model = model.models[0]
    if getattr(model, "provider", "") != "local":
        raise SystemExit(f"duckflow bench kvcache: {model_name} is not an in-process model; use --model local:NAME")
    with tempfile.TemporaryDirectory(prefix="duckflow-kv-") as d:
        root, home = Path(d) / "ws", Path(d) / "home"
        root.mkdir()
        opened = open_session(root, model=model, model_name=model_name, config=cfg,
                              store=SessionStore(home / "s.db"), gate=Gate(home / "g.db"),
                              codec=codec, mode="single-call")
        try:
            session = opened.session
            session.owner.change("task", lambda s: setattr(s, "task", TASK))
            step1 = build_step(session, TASK)
            (root / "hello.py").write_text(HELLO, encoding="utf-8")
            result = '{"exit_code": 0, "stdout": "Hello, World!\\n", "stderr": ""}'
            session.owner.change("evidence", lambda s: s.evidence.append(f"execute_shell python3 hello.py: {result}"))
            step2 = build_step(session, None)
        finally:
            opened.close()
    s1 = constrained(model, max_tokens=STEP1_TOKENS, grammar=step1.grammar, enabled=grammar)
    s2 = constrained(model, max_tokens=STEP1_TOKENS, grammar=step2.grammar, enabled=grammar)
    model.llama  # noqa: B018 - loaded once (build_step counted tokens with it), outside the figures
    shared, total = _shared_prefix(model, to_chat_messages(step1.messages), to_chat_messages(step2.messages))
    warm: list[float] = []
    cold: list[float] = []
    measured: dict[str, list[int]] = {"warm": [], "cold": []}
    for _ in range(rounds):
        _forget(model)
        await _first_token(model, step1.messages, s1)  # step 1 of the session (its reply is cut short)
        warm.append(await _first_token(model, step2.messages, s2))
        measured["warm"] += EVALUATED[-1:]
        _forget(model)
        cold.append(await _first_token(model, step2.messages, s2))
        measured["cold"] += EVALUATED[-1:]
        print(f"kvcache: round {len(cold)}: warm {warm[-1]:.2f} s, cold {cold[-1]:.2f} s", file=sys.stderr, flush=True)
    ratios = [w / c for w, c in zip(warm, cold, strict=True)]
    return {"model": model_name, "codec": codec, "grammar": grammar, "rounds": rounds,
            "prompt_tokens": total, "shared_prefix_tokens": shared,
            "evaluated_tokens": {"warm": total - shared, "cold": total},
            "llama_cpp_evaluated": measured,  # llama.cpp's own n_p_eval per call (a 1-token batch counts as 0)
            "warm_ttft_s": [round(x, 3) for x in warm], "cold_ttft_s": [round(x, 3) for x in cold],
            "ratio": round(statistics.median(ratios), 3), "ratios": [round(r, 3) for r in ratios],
            "load_average": [round(x, 2) for x in os.getloadavg()], "threads": model.n_threads}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="duckflow bench kvcache")
    parser.add_argument("--model", default="local:default", help="an in-process model (default: local:default)")
    parser.add_argument("--codec", choices=["symops", "dml"], default="symops")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-grammar", action="store_true", help="unconstrained calls (the grammar's own cost)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    try:
        out = asyncio.run(measure(args.model, args.codec, max(1, args.rounds), not args.no_grammar))
    except Exception as exc:  # a missing llama-cpp-python or model: one line, no traceback
        from duckflow.errors import DuckflowError

        if isinstance(exc, DuckflowError):
            print(f"duckflow bench kvcache: {exc.message}" + (f" ({exc.hint})" if exc.hint else ""), file=sys.stderr)
            return 1
        raise
    out["command"] = "duckflow bench kvcache " + " ".join(argv)
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
    else:
        print(f"{out['model']} ({out['codec']}, {out['threads']} threads): step-2 prompt {out['prompt_tokens']} "
              f"tokens, {out['shared_prefix_tokens']} shared with step 1 (evaluated: "
              f"{out['evaluated_tokens']['warm']} warm, {out['prompt_tokens']} cold)")
        print(f"prompt tokens llama.cpp evaluated (its counter): warm {out['llama_cpp_evaluated']['warm']}, "
              f"cold {out['llama_cpp_evaluated']['cold']}")
        print(f"time to first token, 2nd call of a session: {out['warm_ttft_s']} s; cold, same prompt: "
              f"{out['cold_ttft_s']} s; ratio warm/cold {out['ratio']} (median of {out['rounds']})")
    return 0
