"""`make run`: the main job — the companion does one small task in a fresh playground workspace.

By default it runs the bundled offline model (`local:default`: the Qwen2.5-Coder model this machine affords, in
process through llama.cpp, grammar-constrained, single-call loop): the plan, the actions as
they stream, the gate's decisions (auto-approve limited to the playground), the files and the
command output are all real. `python -m duckflow.demo --model scripted:demo` replays the
built-in scripted conversation instead (no model needed). Afterwards the protocol layer is
shown on the replies in examples/ (Sym-Ops, DML, JSON) as before → after, one line per action.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

LOCAL_TASK = ("Create fizzbuzz.py that prints the numbers 1 to 15, but Fizz for multiples of 3, "
              "Buzz for multiples of 5 and FizzBuzz for multiples of both. Run it.")
MARKER = ".duckflow-playground"


def _which(model: str) -> str:
    """Which bundled model `local:default` is on this machine, and why (Apache-2.0 as Qwen publishes them)."""
    if model != "local:default":
        return "a local model"
    from duckflow.llm.localmodels import BUNDLED, installed_bundled, pick_default, this_machine

    key, reason = pick_default(installed_bundled(), this_machine())
    why = reason.split(": ", 1)[1] if ": " in reason else reason
    return f"{BUNDLED[key].label} (Apache-2.0; {why})"


def _fresh_playground(base: Path) -> Path:
    """`./playground/` emptied (only when it is ours: it carries the marker file), else a new folder."""
    root = base / "playground"
    if root.exists() and (root / MARKER).exists():
        shutil.rmtree(root)
    elif root.exists() and any(root.iterdir()):
        n = 2
        while (base / f"playground-{n}").exists():
            n += 1
        root = base / f"playground-{n}"
    root.mkdir(parents=True, exist_ok=True)
    (root / MARKER).write_text("created by `make run`; safe to delete\n", encoding="utf-8")
    return root


def companion_demo(base: Path, model: str = "scripted:demo") -> int:
    from duckflow.channels.cli.main import main as cli
    from duckflow.companion.models import DEMO_TASK

    playground = _fresh_playground(base)
    scripted = model in ("scripted:demo", "demo")
    task = DEMO_TASK if scripted else LOCAL_TASK
    print("=== the companion: one task, end to end ===")
    if scripted:
        print("This run uses Duckflow's built-in SCRIPTED model (--model scripted:demo): its replies")
        print("are fixed; the tools, gate, guard and state are real.")
    else:
        print(f"Model: {model} — {_which(model)}, offline, in this process.")
        print("A small model on a CPU: each reply takes seconds to a minute, and it gets small, common")
        print("tasks right more often than not (docs/benchmarks.md) — not large or subtle ones.")
        print("Its replies are grammar-constrained (only valid actions, plausible paths and commands).")
        print("Bigger models: --model ollama:qwen2.5-coder:7b, OPENAI_API_KEY / ANTHROPIC_API_KEY,")
        print("or any GGUF with --model local:/path/model.gguf.")
    print("Writes and commands are auto-approved only inside the playground (--auto-approve-workspace).\n")
    print(f'$ duckflow run "{task}" -w {playground} --model {model} --auto-approve-workspace\n')
    rc = cli(["run", task, "-w", str(playground), "--model", model, "--auto-approve-workspace"])
    print(f"\n=== files in {playground} ===")
    scripts = sorted(p for p in playground.rglob("*.py") if ".duckflow" not in p.parts)
    for path in scripts:
        print(f"--- {path.relative_to(playground)} ---")
        print(path.read_text(encoding="utf-8", errors="replace").rstrip())
    for path in scripts[:1]:
        print(f"\n$ python3 {path.relative_to(playground)}")
        out = subprocess.run([sys.executable, path.name], cwd=path.parent, capture_output=True, text=True,
                             timeout=30)
        print((out.stdout.rstrip() or out.stderr.rstrip())[:2000])
    if not scripts:
        print("(no script was written: the model did not manage this time; see the run above)")
    print(f"\nSee the session: `duckflow status -w {playground}` · undo: `duckflow undo --workspace {playground}`"
          " · talk to it: `duckflow chat -w " + str(playground) + "`")
    return rc


def protocol_demo(base: Path, *, as_json: bool = False) -> int:
    """Each reply in examples/ before and after the protocol layer, one line per action (JSON with --json)."""
    from duckflow.protocol_story import KINDS, example_files, read, story

    examples = base / "examples"
    if not examples.is_dir():
        examples = Path(__file__).resolve().parents[2] / "examples"
    files = example_files(examples)
    print("\n=== the protocol layer: a model's messy reply read safely, a guessed action not run ===")
    if not files:
        print("(no example replies in examples/ yet: try `duckflow protocol parse --protocol symops FILE`)")
        return 0
    for path in files:
        if as_json:
            from duckflow.channels.cli.common import print_json

            print_json({"file": path.name, **read(path, KINDS[path.suffix])})
        else:
            print(story(path))
    if not as_json:
        print("(the reader's full output: `python -m duckflow.demo --json`, or `duckflow protocol parse FILE`)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m duckflow.demo", description="make run's demo")
    parser.add_argument("--model", default="local:default",
                        help="local:default (the bundled model), scripted:demo, or any model name")
    parser.add_argument("--json", action="store_true", help="the protocol layer's results as JSON lines")
    args = parser.parse_args(argv)
    base = Path.cwd()
    rc = companion_demo(base, args.model)
    protocol_demo(base, as_json=args.json)
    return rc


if __name__ == "__main__":
    sys.exit(main())
