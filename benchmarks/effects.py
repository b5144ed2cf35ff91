"""`duckflow bench effects [--files N ...] [--rounds N] [--json]`: what the box costs an auto-approved test run.

An auto-approved command that runs code runs in the box (workspace/box.py): bubblewrap on a
copy-on-write overlay of the workspace (workspace/staging.py), then its lasting effects are
read from the staging area and what the approval covers is applied. The bar is a ratio
measured in this run, per workspace size: the wall time of the project's test run boxed that
way (staging + bubblewrap + overlay + reading the effects + applying them), over the same run
unboxed (`workspace.sandbox = "none"`, run as a person-approved command runs without a box), on
a synthetic Python project of N files (N-10 modules ~2 KB each in 20 packages, 10 test files
whose tests import every module), with Python's bytecode cache warm in both modes (the box's
cache is outside the workspace). Where no bubblewrap box can run, it says so and measures nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

RATIO_BAR = 2.0  # boxed / unboxed, the project's tests, 200 and 2,000 files
SIZES = (200, 2000)
TESTS = 10


def _project(root: Path, files: int) -> None:
    modules = max(1, files - TESTS)
    names = []
    for i in range(modules):
        pkg = root / "src" / f"pkg{i % 20}"
        pkg.mkdir(parents=True, exist_ok=True)
        (pkg / "__init__.py").touch()
        body = "".join(f"def f{j}(x):\n    return x + {j}\n\n" for j in range(40))
        (pkg / f"mod{i}.py").write_text(f'"""module {i}"""\n\n{body}')
        names.append(f"pkg{i % 20}.mod{i}")
    tests = root / "tests"
    tests.mkdir()
    for t in range(TESTS):
        mine = names[t::TESTS]
        lines = ["import importlib\n\n", f"NAMES = {mine!r}\n\n",
                 "def test_modules():\n    for n in NAMES:\n",
                 "        assert importlib.import_module(n).f1(1) == 2\n"]
        (tests / f"test_t{t}.py").write_text("".join(lines))
    (root / "conftest.py").write_text("import sys, os\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), 'src'))\n")


def _command() -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]


def _run(root: Path, sandbox: str, staging: str = "") -> None:
    from duckflow.workspace.shell import run_command

    result = asyncio.run(run_command(root, _command(), timeout=120, limit=4096, sandbox=sandbox,
                                     staging=staging))
    if result.exit_code != 0:
        raise RuntimeError(f"the test run failed ({sandbox}): {result.stdout[-500:]} {result.stderr[-500:]}")


def _boxed(root: Path) -> float:
    from duckflow.workspace.staging import Staging

    t = time.perf_counter()
    st = Staging(root)
    try:
        _run(root, "auto", str(st.dir))
        fx = st.changes(())
        st.apply(fx)
        assert not fx.held, fx.listing()
    finally:
        st.close()
    return time.perf_counter() - t


def _unboxed(root: Path) -> float:
    t = time.perf_counter()
    _run(root, "none")
    return time.perf_counter() - t


def measure(files: int, rounds: int) -> dict[str, Any]:
    from benchmarks._ratio import interleave, paired_ratio, summary

    tmp = Path(tempfile.mkdtemp(prefix="duckflow-bench-effects-"))
    old = {k: os.environ.get(k) for k in ("DUCKFLOW_HOME", "PYTHONDONTWRITEBYTECODE")}
    os.environ["DUCKFLOW_HOME"] = str(tmp / "home")
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # a warm bytecode cache in both modes
    try:
        root = tmp / "ws"
        root.mkdir()
        _project(root, files)
        times = interleave({"boxed": lambda: _boxed(root), "unboxed": lambda: _unboxed(root)}, rounds)
        return {"files": files, "ratio": paired_ratio(times["boxed"], times["unboxed"]),
                "boxed_ms": summary(times["boxed"], 1000, 1),
                "unboxed_ms": summary(times["unboxed"], 1000, 1)}
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str]) -> int:
    from benchmarks._ratio import exit_code, machine, ratio_bar
    from duckflow.workspace.box import backend

    parser = argparse.ArgumentParser(prog="duckflow bench effects")
    parser.add_argument("--files", type=int, nargs="+", default=list(SIZES),
                        help="workspace sizes to measure (default: 200 2000)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (median ratio kept)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if backend("bwrap") is None:
        msg = "no bubblewrap box can run here (bubblewrap, user namespaces, overlayfs): nothing measured"
        print(json.dumps({"benchmark": "effects", "skipped": msg}) if args.json else msg)
        return 0
    got = [measure(max(TESTS + 1, n), max(1, args.rounds)) for n in args.files]
    bars = [ratio_bar(f"the project's tests boxed / unboxed, {g['files']} files", g["ratio"], RATIO_BAR,
                      boxed_ms=g["boxed_ms"]["median"], unboxed_ms=g["unboxed_ms"]["median"]) for g in got]
    if args.json:
        print(json.dumps({"benchmark": "effects", "machine": machine(), "ratios": bars, "sizes": got}))
    else:
        for g in got:
            r = g["ratio"]
            print(f"box, the project's tests over {g['files']} files: ratio min/median/max "
                  f"{r['min']}/{r['median']}/{r['max']} (bar <= {RATIO_BAR}); boxed "
                  f"{g['boxed_ms']['median']} ms, unboxed {g['unboxed_ms']['median']} ms")
    return exit_code([b["pass"] for b in bars])
