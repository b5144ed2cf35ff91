"""Corpus check: how many malformed replies yield exactly the intended executable actions.

A corpus folder holds `NAME.txt` (a reply as a model wrote it) and `NAME.expected.json`
(`{"request": str|null, "note": str, "actions": [{"type", "path", "content"}]}` — the actions
that SHOULD run, in order). A case is exact when the executable actions equal the expected
ones; any executable action that is not expected counts as unintended. Bars (issue 2):
recovery >= 98 % and zero unintended executable actions.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from duckflow.protocols.symops.processor import parse

RECOVERY_BAR = 0.98


def _key(a: dict[str, Any]) -> tuple[Any, Any, Any]:
    return (a.get("type"), a.get("path"), a.get("content"))


def evaluate_case(reply: Path) -> dict[str, Any]:
    """One case: what ran, what was expected, and which executable actions were not intended."""
    expected_file = reply.with_name(reply.name[: -len(".txt")] + ".expected.json")
    meta = json.loads(expected_file.read_text(encoding="utf-8"))
    text = reply.read_bytes().decode("utf-8")
    result = parse(text, request=meta.get("request"))
    got = [_key(a.to_dict()) for a in result.actions if a.executable]
    want = [_key(a) for a in meta.get("actions", [])]
    unintended = Counter(got) - Counter(want)
    return {
        "case": reply.stem,
        "exact": got == want,
        "stage": result.stage,
        "got": got,
        "expected": want,
        "unintended": sum(unintended.values()),
    }


def evaluate(path: str | Path) -> dict[str, Any]:
    """Run every case in `path`: cases, exact, recovery_rate, unintended_executable, failures."""
    folder = Path(path)
    replies = sorted(p for p in folder.glob("*.txt") if not p.name.endswith(".expected.json"))
    results = [evaluate_case(p) for p in replies]
    exact = sum(1 for r in results if r["exact"])
    unintended = sum(r["unintended"] for r in results)
    rate = exact / len(results) if results else 0.0
    return {
        "cases": len(results),
        "exact": exact,
        "recovery_rate": round(rate, 4),
        "unintended_executable": unintended,
        "stages": dict(Counter(r["stage"] for r in results)),
        "failures": [r for r in results if not r["exact"] or r["unintended"]],
        "bar": f"recovery >= {RECOVERY_BAR:.0%}, unintended executable == 0",
        "pass": bool(results) and rate >= RECOVERY_BAR and unintended == 0,
    }


def main() -> int:  # python -m duckflow.protocols.symops.corpus [PATH]
    import sys

    report = evaluate(sys.argv[1] if len(sys.argv) > 1 else "tests/corpus/symops")
    print(json.dumps(report, ensure_ascii=False, indent=2, default=str))
    return 0 if report["pass"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
