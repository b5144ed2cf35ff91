"""`duckflow bench protocols [--json] [--quick]`: token overhead and speed of the text protocols.

(a) Token overhead per action for Sym-Ops, DML and OpenAI tool-call JSON on a fixed suite:
    (tokens of the reply - tokens of thoughts, paths, commands and contents) / actions,
    counted exactly with cl100k_base offline (duckflow.llm.tokens).
(b) Sym-Ops bars as ratios against baselines in the same run (bench/_protocol_bars.py): parse
    vs json.loads / json_repair.loads of the same actions, 1 MB of prose and of actions in
    16-byte pieces through the engine's reader vs one-shot (time <= 3x, memory <= 2x), 20,000
    valid replies in noise (0 runnable actions not in the reply), and the compliance table of
    real model replies per stage (tests/corpus/real; runnable guesses 0).
(c) Corpus recovery via duckflow.protocols.symops.corpus.evaluate(tests/corpus/symops).
Every figure is printed with its bar and PASS/FAIL (the corpus: "not measured" when its folder is missing).
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks._ratio import exit_code, machine


@dataclass(frozen=True)
class Act:
    """One action of the suite: kind (create/edit/delete/run/test), target (path or command)."""

    kind: str
    target: str
    content: str | None = None


@dataclass(frozen=True)
class Reply:
    thought: str
    actions: tuple[Act, ...]


def _hunk(search: str, replace: str) -> str:
    return f"<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"


# The fixed suite: 6 replies, 22 actions, contents the way coding agents write them.
SUITE: list[Reply] = [
    Reply("Add a health endpoint with its test, then run that test.", (
        Act("create", "src/app/health.py", 'from fastapi import APIRouter\n\nrouter = APIRouter()\n\n\n@router.get("/health")\ndef health() -> dict[str, str]:\n    """Liveness probe for the load balancer."""\n    return {"status": "ok"}\n'),
        Act("create", "tests/test_health.py", 'from fastapi.testclient import TestClient\n\nfrom app.main import app\n\n\ndef test_health_is_ok() -> None:\n    client = TestClient(app)\n    response = client.get("/health")\n    assert response.status_code == 200\n    assert response.json() == {"status": "ok"}\n'),
        Act("test", "tests/test_health.py"),
    )),
    Reply("Rename load_cfg to load_config and update its only caller; lint afterwards.", (
        Act("edit", "src/app/config.py", _hunk("def load_cfg(path: str) -> dict:\n", "def load_config(path: str) -> dict:\n")),
        Act("edit", "src/app/main.py", _hunk("from app.config import load_cfg\n\nsettings = load_cfg(\"app.toml\")\n", "from app.config import load_config\n\nsettings = load_config(\"app.toml\")\n")),
        Act("run", "ruff check src/app --fix"),
    )),
    Reply("The v1 deploy scripts are obsolete since the move to containers; remove them.", (
        Act("delete", "scripts/old_deploy.sh"),
        Act("delete", "scripts/migrate_v1.py"),
        Act("run", "git status --short"),
    )),
    Reply("Document the new commands and add the Makefile and compose file.", (
        Act("edit", "README.md", _hunk("## Usage\n", "## Usage\n\n```sh\nmake dev   # start the stack\nmake test  # run the tests\n```\n\n---\n")),
        Act("create", "Makefile", ".PHONY: dev test lint\n\ndev:\n\tdocker compose up --build\n\ntest:\n\tpytest -q\n\nlint:\n\truff check src tests\n"),
        Act("create", "docker-compose.yml", "services:\n  app:\n    build: .\n    ports:\n      - \"8000:8000\"\n    environment:\n      DATABASE_URL: postgresql://app:app@db:5432/app\n  db:\n    image: postgres:16\n"),
        Act("run", "make lint"),
    )),
    Reply("Pagination drops the last item: the slice end is off by one. Fix it and add a regression test.", (
        Act("edit", "src/app/pagination.py", _hunk("    end = start + size - 1\n    return items[start:end]\n", "    end = start + size\n    return items[start:end]\n")),
        Act("create", "tests/test_pagination.py", "import pytest\n\nfrom app.pagination import page\n\n\n@pytest.mark.parametrize(\"n\", [1, 9, 10, 11])\ndef test_last_page_keeps_every_item(n: int) -> None:\n    items = list(range(n))\n    pages = [page(items, i, 10) for i in range((n + 9) // 10)]\n    assert sum(pages, []) == items\n"),
        Act("test", "tests/test_pagination.py"),
        Act("run", "pytest -q tests/test_pagination.py::test_last_page_keeps_every_item -x"),
    )),
    Reply("Add the users table migration, a fixture, and use the new column; drop the scratch file.", (
        Act("create", "migrations/0002_add_users.sql", "-- users of the app\nCREATE TABLE users (\n    id SERIAL PRIMARY KEY,\n    email TEXT NOT NULL UNIQUE, -- login\n    created_at TIMESTAMPTZ DEFAULT now()\n);\n"),
        Act("create", "tests/fixtures/users.json", '[\n  {"id": 1, "email": "ada@example.com"},\n  {"id": 2, "email": "linus@example.com"}\n]\n'),
        Act("edit", "src/app/db.py", _hunk("    return conn.execute(\"SELECT id FROM users\").fetchall()\n", "    return conn.execute(\"SELECT id, email FROM users\").fetchall()\n")),
        Act("test", "tests/"),
        Act("delete", "migrations/0001_tmp.sql"),
    )),
]
QUICK_SUITE: list[Reply] = SUITE[:1]

TOOL_OF = {"create": "write_file", "edit": "edit_file", "delete": "delete_path", "run": "execute_shell", "test": "run_tests"}
PARAM_OF = {"create": ("path", "content"), "edit": ("path", "content"), "delete": ("path",), "run": ("command",), "test": ("path",)}


def render_symops(reply: Reply) -> tuple[str, str]:
    """(text, which serializer ran)."""
    from duckflow.protocols.symops import serialize
    from duckflow.protocols.symops.model import Action, SymOpsResult

    actions = [
        Action(type=a.kind, verb=a.kind, path=a.target, content=None if a.content is None else a.content.rstrip("\n"))
        for a in reply.actions
    ]
    return serialize(SymOpsResult(thoughts=[reply.thought], actions=actions)), "duckflow.protocols.symops.serialize"


def render_dml(reply: Reply) -> str:
    lines = [f"Thought: {reply.thought}", "Action:"]
    for a in reply.actions:
        args = [a.target] if a.content is None else [a.target, "\n" + a.content]
        lines.append("🦆▶️[T:" + "|".join([TOOL_OF[a.kind], *args]) + "]◀️🦆")
    return "\n".join(lines) + "\n"


def render_openai(reply: Reply, rng: random.Random) -> str:
    """The assistant message content plus its `tool_calls` array as the OpenAI API returns it."""
    calls = []
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    for a in reply.actions:
        values = [a.target] if a.content is None else [a.target, a.content]
        arguments = dict(zip(PARAM_OF[a.kind], values, strict=True))
        calls.append(
            {
                "id": "call_" + "".join(rng.choice(alphabet) for _ in range(24)),
                "type": "function",
                "function": {"name": TOOL_OF[a.kind], "arguments": json.dumps(arguments)},
            }
        )
    return reply.thought + "\n" + json.dumps(calls)


def token_overhead(suite: list[Reply]) -> dict[str, Any]:
    from duckflow.llm.tokens import count_tokens

    def tokens(text: str) -> int:
        return count_tokens(text).tokens

    payload = 0
    n = 0
    for reply in suite:
        payload += tokens(reply.thought)
        for a in reply.actions:
            n += 1
            payload += tokens(a.target) + (tokens(a.content) if a.content is not None else 0)
    rng = random.Random(7)
    totals = {"symops": 0, "dml": 0, "json": 0}
    serializer = ""
    for reply in suite:
        text, serializer = render_symops(reply)
        totals["symops"] += tokens(text)
        totals["dml"] += tokens(render_dml(reply))
        totals["json"] += tokens(render_openai(reply, rng))
    per = {k: round((v - payload) / n, 2) for k, v in totals.items()}
    exact = count_tokens("hello world")
    bar_abs = per["symops"] <= 12
    bar_rel = per["symops"] <= per["json"] / 4
    return {
        "actions": n,
        "replies": len(suite),
        "tokenizer": exact.method,
        "exact": exact.exact,
        "symops_serializer": serializer,
        "payload_tokens": payload,
        "reply_tokens": totals,
        "per_action": per,
        "bars": {
            "symops_le_12": {"value": per["symops"], "bar": "<= 12", "pass": bar_abs},
            "symops_le_quarter_json": {
                "value": round(per["symops"] / per["json"], 3) if per["json"] else None,
                "bar": "<= 0.25",
                "pass": bar_rel,
            },
        },
    }


def _grow(text: str, size: int) -> str:
    return text * max(1, size // max(1, len(text.encode())) + 1)


def damaged_reply(suite: list[Reply], size: int) -> str:
    """A reply broken the way models break Sym-Ops: prose, fences, bold action lines, CRLF,
    an action only described in prose (fuzzy), and a block cut off at the end."""
    parts = ["Sure! Here is the plan.\n"]
    for reply in suite:
        parts.append(f"~{reply.thought}\n")
        for a in reply.actions:
            parts.append(f"**$ {a.kind} @ `{a.target}`**\n")
            if a.content is not None:
                parts.append("```\n" + a.content.rstrip("\n") + "\n```\n")
        parts.append("You may also want to create `src/extra.py` with:\n```python\nprint('extra')\n```\n")
    text = _grow("".join(parts).replace("\n", "\r\n"), size)
    return text[:size] + "\r\nI hope this helps!\r\n```\r\n$ create @ cut.py\r\n--\r\nprint(1"


def speed(suite: list[Reply], quick: bool) -> dict[str, Any]:
    """Ratios against baselines in the same run (see _protocol_bars)."""
    from benchmarks import _protocol_bars as bars

    repeat = 1 if quick else 5
    canonical = "".join(render_symops(r)[0] for r in suite)
    size = 1_000_000 if not quick else 40_000
    big = _grow(canonical, size)[:size]
    big = big[: big.rfind("\n--\n") + 4]  # whole actions only
    prose = _grow("This is a line of prose the model wrote, with `code` and a path like src/a.py.\n", size)[:size]
    prose = prose[: prose.rfind("\n") + 1]
    actions = [{"type": a.kind, "path": a.target, "content": a.content} for r in suite for a in r.actions]
    reps = max(1, len(big) // max(1, len(canonical)))
    out: dict[str, Any] = {}
    out.update(bars.json_baselines(big, actions * reps, damaged_reply(suite, 100_000 if not quick else 10_000),
                                   repeat))  # fmt: skip
    out.update(bars.streaming(big, prose, repeat))
    out.update(bars.noise(20_000 if not quick else 300))
    return out


def _corpus_dir(given: str) -> Path:
    """`given` as is, or relative to the source checkout when run from elsewhere."""
    path = Path(given)
    if path.is_dir() or path.is_absolute():
        return path
    checkout = Path(__file__).resolve().parents[1] / given
    return checkout if checkout.is_dir() else path


def corpus(path: Path) -> dict[str, Any]:
    from duckflow.protocols.symops.corpus import evaluate

    if not path.is_dir():
        return {"pass": None, "note": f"not measured: {path} does not exist"}
    report = evaluate(path)
    data = report if isinstance(report, dict) else getattr(report, "__dict__", {"report": str(report)})
    if hasattr(report, "to_dict"):
        data = report.to_dict()
    return {"report": data, "pass": data.get("pass") if isinstance(data, dict) else None}


def ratios(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The ratio bars of a result (for `bench repeat` and a reader of the JSON), one shape."""
    out = []
    for name, v in result["speed"].items():
        bar = str(v.get("bar", ""))
        if bar.startswith("<= ") and isinstance(v.get("value"), (int, float)):
            out.append({"bar": name, "value": v["value"], "limit": float(bar[3:]), "pass": v["pass"],
                        "min": v.get("min", v["value"]), "max": v.get("max", v["value"])})
    tok = result["tokens"]["bars"]["symops_le_quarter_json"]
    out.append({"bar": "Sym-Ops tokens per action / JSON tool calls'", "value": tok["value"], "limit": 0.25,
                "pass": tok["pass"], "min": tok["value"], "max": tok["value"]})
    return out


def _status(p: bool | None) -> str:
    return "not measured" if p is None else ("PASS" if p else "FAIL")


def _print(result: dict[str, Any]) -> None:
    tok = result["tokens"]
    print(f"load {result['machine']['load_avg']} on {result['machine']['cpus']} cpus")
    print(f"Token overhead per action ({tok['actions']} actions in {tok['replies']} replies, {tok['tokenizer']}):")
    for k, v in tok["per_action"].items():
        print(f"  {k:7s} {v:7.2f} tokens/action")
    print(f"  Sym-Ops serializer: {tok['symops_serializer']}")
    for name, b in tok["bars"].items():
        print(f"  {name}: {b['value']} (bar {b['bar']}) {_status(b['pass'])}")
    print("Sym-Ops bars (ratios against baselines in the same run):")
    for name, v in result["speed"].items():
        shown = v.get("note") or f"{v['value']} (bar {v['bar']}) {_status(v['pass'])}"
        if v.get("bar") == "information":
            shown = f"{v['value']} (for information)"
        if "min" in v and v.get("bar") not in (None, "0"):
            shown += f"  [min {v['min']}, max {v['max']}; best/best {v.get('best_ratio')}]"
        print(f"  {name}: {shown}")
        if v.get("rows"):  # the per-stage table is one report with the live models: bench compliance
            print("    per stage, beside the live models: duckflow bench compliance")
    c = result["corpus"]
    if "report" in c and isinstance(c["report"], dict):
        rep = c["report"]
        names = [f.get("case", "?") for f in rep.get("failures", []) if isinstance(f, dict)]
        print(
            f"Corpus recovery: {rep.get('exact')}/{rep.get('cases')} exact "
            f"(rate {rep.get('recovery_rate')}, bar {rep.get('bar', '>= 98%, 0 unintended')}), "
            f"unintended executable {rep.get('unintended_executable')} {_status(c['pass'])}"
        )
        if names:
            print(f"  not recovered: {', '.join(names)}")
    else:
        print(f"Corpus recovery: {c.get('note') or c.get('report')}")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="duckflow bench protocols", description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--quick", action="store_true", help="tiny suite and sizes (for tests)")
    ap.add_argument("--corpus", default="tests/corpus/symops", help="Sym-Ops corpus folder")
    ap.add_argument("--real", default="tests/corpus/real", help="folder of real model replies (one folder per source)")
    args = ap.parse_args(argv)
    suite = QUICK_SUITE if args.quick else SUITE
    result: dict[str, Any] = {"tokens": token_overhead(suite)}
    try:
        result["speed"] = speed(suite, args.quick)
    except Exception as err:  # a broken dependency must not hide the other figures
        result["speed"] = {"error": {"value": None, "pass": None, "note": f"not measured: {type(err).__name__}: {err}"}}
    try:
        result["corpus"] = corpus(_corpus_dir(args.corpus))
    except Exception as err:
        result["corpus"] = {"pass": None, "note": f"not measured: {type(err).__name__}: {err}"}
    try:
        from benchmarks._protocol_bars import compliance

        result["speed"].update(compliance(_corpus_dir(args.real)))
    except Exception as err:
        result["speed"]["compliance"] = {"value": None, "pass": None,
                                         "note": f"not measured: {type(err).__name__}: {err}"}
    passes = [b["pass"] for b in result["tokens"]["bars"].values()]
    passes += [v["pass"] for v in result["speed"].values()] + [result["corpus"]["pass"]]
    result["pass"] = exit_code(passes) == 0
    result["machine"] = machine()
    result["ratios"] = ratios(result)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        _print(result)
    return exit_code(passes)
