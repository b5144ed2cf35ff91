"""`duckflow bench security [--json]`: the sanitizer's recall, false positives on code, throughput.

Corpus (see docs/security.md):
- positives: `tests/security/corpus/positives.jsonl`, FAKE secrets and personal data in
  realistic contexts (.env, YAML, JSON, code, logs, chats, INI, k8s, CSV), each labelled.
  A label counts as found when every occurrence of its value is inside masked spans.
- code: the Python standard library of the running interpreter (read at run time, not
  copied; test folders left out because their fixtures hold literal passwords and phone
  numbers on purpose) plus `benign_tricky.txt` (lockfile hashes, UUIDs, base64 fixtures,
  hex colours, versions, code that handles secrets). Every finding there counts as a false
  positive, except e-mail addresses, which are real personal data (authors' addresses in
  file headers): they are reported separately.
Bars: recall >= 99 %, <= 1 false positive per 10,000 code lines, and speed as a ratio: the
sanitizer's time over the whole text against a plain `re` scan of the same text for one pattern
(one keyword-assignment pattern), interleaved round by round in the same run, median of the per-round ratios
<= SPEED_RATIO_BAR. The absolute MB/s (CPU and wall) is printed beside it.
"""

from __future__ import annotations

import argparse
import json
import sys
import sysconfig
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from duckflow.security.sanitizer import Sanitizer

RECALL_BAR = 0.99
FP_BAR = 1.0  # per 10,000 lines
SPEED_RATIO_BAR = 5.0  # sanitizer time / one keyword-assignment scan; 3.2-3.3 measured (8 MB/s)
BASELINE_PATTERN = r"(?i)(?:password|passwd|secret|token|api_key)\s*[:=]\s*\S+"  # one keyword-assignment rule
_TEST_DIRS = {"test", "tests", "idle_test", "unittest", "__pycache__", "site-packages", "lib2to3"}


def default_corpus_dir() -> Path:
    return Path(__file__).resolve().parents[1] / "tests" / "security" / "corpus"


def load_positives(corpus: Path) -> list[dict[str, Any]]:
    path = corpus / "positives.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def stdlib_files(limit_lines: int | None = None) -> list[Path]:
    """Non-test `.py` files of the standard library, sorted; up to `limit_lines` lines."""
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.rglob("*.py") if not (_TEST_DIRS & set(p.relative_to(root).parts[:-1])))
    if limit_lines is None:
        return files
    out: list[Path] = []
    total = 0
    for p in files:
        if total >= limit_lines:
            break
        out.append(p)
        total += p.read_bytes().count(b"\n")
    return out


@dataclass
class PositiveResult:
    labels: int = 0
    found: int = 0
    missed: list[dict[str, str]] = field(default_factory=list)
    unexpected: list[dict[str, str]] = field(default_factory=list)
    by_kind: Counter[str] = field(default_factory=Counter)
    missed_by_kind: Counter[str] = field(default_factory=Counter)

    @property
    def recall(self) -> float:
        return self.found / self.labels if self.labels else 1.0


def evaluate_positives(docs: list[dict[str, Any]], sanitizer: Sanitizer) -> PositiveResult:
    res = PositiveResult()
    for doc in docs:
        text: str = doc["text"]
        spans = [(c.start, c.end) for c in sanitizer.scan(text)]
        covered = bytearray(len(text))
        for a, b in spans:
            covered[a:b] = b"\x01" * (b - a)
        label_spans: list[tuple[int, int]] = []
        for label in doc["labels"]:
            value = label["value"]
            res.labels += 1
            res.by_kind[label["kind"]] += 1
            ok = True
            start = text.find(value)
            while start >= 0:
                label_spans.append((start, start + len(value)))
                if not all(covered[start : start + len(value)]):
                    ok = False
                start = text.find(value, start + 1)
            if ok:
                res.found += 1
            else:
                res.missed_by_kind[label["kind"]] += 1
                res.missed.append({"doc": doc["id"], "kind": label["kind"], "value": value})
        for a, b in spans:
            if not any(a < lb and la < b for la, lb in label_spans):
                res.unexpected.append({"doc": doc["id"], "value": text[a:b]})
    return res


@dataclass
class CodeResult:
    files: int = 0
    lines: int = 0
    bytes: int = 0
    false_positives: list[dict[str, Any]] = field(default_factory=list)
    emails: int = 0

    @property
    def fp_per_10k(self) -> float:
        return len(self.false_positives) * 10_000 / self.lines if self.lines else 0.0


def extra_code(dirs: list[Path]) -> list[tuple[str, str]]:
    """`.py` files under `dirs` outside test folders (for `--code DIR`)."""
    out: list[tuple[str, str]] = []
    for root in dirs:
        for p in sorted(root.rglob("*.py")):
            if {"test", "tests", "testing"} & {part.lower() for part in p.relative_to(root).parts[:-1]}:
                continue
            try:
                out.append((str(p), p.read_text(encoding="utf-8")))
            except (UnicodeDecodeError, OSError):
                continue
    return out


def code_texts(corpus: Path, limit_lines: int | None = None) -> list[tuple[str, str]]:
    texts: list[tuple[str, str]] = []
    tricky = corpus / "benign_tricky.txt"
    if tricky.exists():
        texts.append((tricky.name, tricky.read_text(encoding="utf-8")))
    root = Path(sysconfig.get_paths()["stdlib"])
    for p in stdlib_files(limit_lines):
        try:
            texts.append((str(p.relative_to(root)), p.read_text(encoding="utf-8")))
        except (UnicodeDecodeError, OSError):
            continue
    return texts


def evaluate_code(texts: list[tuple[str, str]], sanitizer: Sanitizer) -> CodeResult:
    res = CodeResult()
    for name, text in texts:
        res.files += 1
        res.lines += text.count("\n")
        res.bytes += len(text.encode("utf-8"))
        for c in sanitizer.scan(text):
            if c.kind == "email":
                res.emails += 1
                continue
            line = text.count("\n", 0, c.start) + 1
            res.false_positives.append({"file": name, "line": line, "kind": c.kind, "value": text[c.start : c.end][:80]})
    return res


def throughput(texts: list[str], sanitizer: Sanitizer, rounds: int = 5) -> dict[str, Any]:
    """`mask()` over `texts` against one plain regex scan of the same texts, interleaved.

    Each round times both back to back (CPU time of this process); the bar is the median of
    the per-round ratios, which load on a shared machine moves far less than an absolute MB/s.
    """
    import re

    from benchmarks._ratio import interleave, paired_ratio, summary

    size = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    baseline = re.compile(BASELINE_PATTERN)

    def sanitize() -> float:
        c0 = time.process_time()
        for t in texts:
            sanitizer.mask(t)
        return time.process_time() - c0

    def one_regex() -> float:
        c0 = time.process_time()
        for t in texts:
            for _ in baseline.finditer(t):
                pass
        return time.process_time() - c0

    w0 = time.perf_counter()
    times = interleave({"sanitize": sanitize, "one_regex": one_regex}, rounds, warmup=1)
    wall = time.perf_counter() - w0
    ratio = paired_ratio(times["sanitize"], times["one_regex"])
    best = min(times["sanitize"])
    return {"ratio": ratio, "megabytes": round(size, 2), "rounds": rounds,
            "sanitize_s": summary(times["sanitize"]), "one_regex_s": summary(times["one_regex"]),
            "cpu_mb_s": round(size / best, 2) if best > 0 else None,
            "wall_s_all_rounds": round(wall, 2)}


def run(corpus: Path, *, limit_lines: int | None = None, repeat: int = 5,
        code_dirs: list[Path] | None = None) -> dict[str, Any]:
    sanitizer = Sanitizer()
    docs = load_positives(corpus)
    pos = evaluate_positives(docs, sanitizer)
    code = code_texts(corpus, limit_lines) + extra_code(code_dirs or [])
    cres = evaluate_code(code, sanitizer)
    speed = throughput([t for _, t in code] + [d["text"] for d in docs], sanitizer, repeat)
    checks = {
        "recall": {"value": round(pos.recall, 4), "bar": f">= {RECALL_BAR}", "pass": pos.recall >= RECALL_BAR},
        "fp_per_10k_code_lines": {"value": round(cres.fp_per_10k, 3), "bar": f"<= {FP_BAR}",
                                  "pass": cres.fp_per_10k <= FP_BAR},
        "speed_vs_one_regex": {"value": speed["ratio"]["median"], "bar": f"<= {SPEED_RATIO_BAR}",
                               "pass": speed["ratio"]["median"] <= SPEED_RATIO_BAR,
                               "measure": "CPU time, median of per-round ratios", **speed},
    }
    from benchmarks._ratio import machine, ratio_bar

    ratios = [ratio_bar("sanitizer CPU time / one keyword-assignment regex scan", speed["ratio"], SPEED_RATIO_BAR,
                        sanitizer_cpu_mb_s=speed["cpu_mb_s"], megabytes=speed["megabytes"],
                        one_regex_s=speed["one_regex_s"]["median"], sanitize_s=speed["sanitize_s"]["median"])]
    return {
        "benchmark": "security", "machine": machine(), "ratios": ratios,
        "pass": all(c["pass"] for c in checks.values()),
        "checks": checks,
        "positives": {"documents": len(docs), "labels": pos.labels, "found": pos.found,
                      "missed": pos.missed[:50], "missed_by_kind": dict(pos.missed_by_kind),
                      "labels_by_kind": dict(pos.by_kind), "unexpected_findings": len(pos.unexpected),
                      "unexpected_examples": pos.unexpected[:20]},
        "code": {"files": cres.files, "lines": cres.lines, "megabytes": round(cres.bytes / 1e6, 2),
                 "false_positives": len(cres.false_positives), "false_positive_examples": cres.false_positives[:30],
                 "email_addresses_masked": cres.emails},
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="duckflow bench security", description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--corpus", type=Path, default=default_corpus_dir(), help="folder with positives.jsonl")
    parser.add_argument("--limit-lines", type=int, default=None, help="use only this many stdlib lines")
    parser.add_argument("--repeat", type=int, default=5, help="interleaved speed rounds (median ratio is kept)")
    parser.add_argument("--code", type=Path, action="append", default=[], metavar="DIR",
                        help="also count false positives on the .py files under DIR (repeatable)")
    args = parser.parse_args(argv)
    if not (args.corpus / "positives.jsonl").exists():
        print(f"duckflow bench security: no labelled corpus at {args.corpus}; "
              "run it from a source checkout or pass --corpus DIR", file=sys.stderr)
        return 2
    missing = [d for d in args.code if not d.is_dir()]
    if missing:
        print(f"duckflow bench security: not a directory: {missing[0]}", file=sys.stderr)
        return 2
    result = run(args.corpus, limit_lines=args.limit_lines, repeat=args.repeat, code_dirs=args.code)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        pos, code = result["positives"], result["code"]
        print(f"positives: {pos['found']}/{pos['labels']} labelled values masked in {pos['documents']} documents"
              f" ({pos['unexpected_findings']} other findings)")
        print(f"code: {code['lines']} lines in {code['files']} files, {code['false_positives']} false positives"
              f" ({code['email_addresses_masked']} real e-mail addresses masked, not counted)")
        for name, c in result["checks"].items():
            print(f"  {name:24s} {c['value']:>10}  bar {c['bar']:8s}  {'PASS' if c['pass'] else 'FAIL'}")
        sp = result["checks"]["speed_vs_one_regex"]
        print(f"  (speed: sanitizer {sp['cpu_mb_s']} MB/s CPU; one-regex scan {sp['one_regex_s']['median']} s per round; "
              f"ratio min/median/max {sp['ratio']['min']}/{sp['ratio']['median']}/{sp['ratio']['max']}; "
              f"load {result['machine']['load_avg']})")
        for m in pos["missed"][:10]:
            print(f"  missed {m['kind']}: {m['value'][:60]} ({m['doc']})")
        for fp in code["false_positive_examples"][:10]:
            print(f"  false positive {fp['kind']}: {fp['value']!r} at {fp['file']}:{fp['line']}")
    return 0 if result["pass"] else 1
