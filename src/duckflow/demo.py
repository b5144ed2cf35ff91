"""`make run`: the main job — the companion does one small task in a fresh playground workspace.

No local model is bundled yet, so the run uses the built-in scripted model (`scripted:demo`)
and says so: the plan, the gated write with its diff, the review and the end state are real
(real tools, gate, guard, session store); only the model's words are scripted. Afterwards the
protocol layer is shown on the replies in examples/ (Sym-Ops, DML, JSON).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

MARKER = ".duckflow-playground"


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


def companion_demo(base: Path) -> int:
    from duckflow.channels.cli.main import main as cli
    from duckflow.companion.models import DEMO_TASK

    playground = _fresh_playground(base)
    print("=== the companion: one task, end to end ===")
    print("No local model is bundled yet, so this run uses Duckflow's built-in SCRIPTED model")
    print("(--model scripted:demo): its replies are fixed; the tools, gate, guard and state are real.")
    print("For a real model: set OPENAI_API_KEY or ANTHROPIC_API_KEY, or run Ollama (OLLAMA_HOST),")
    print(f"then `duckflow chat -w {playground}`.\n")
    print(f'$ duckflow run "{DEMO_TASK}" -w {playground} --model scripted:demo --auto-approve-workspace\n')
    rc = cli(["run", DEMO_TASK, "-w", str(playground), "--model", "scripted:demo",
              "--auto-approve-workspace"])
    hello = playground / "hello.py"
    if rc == 0 and hello.exists():
        print(f"\n$ python {hello}")
        out = subprocess.run([sys.executable, str(hello)], capture_output=True, text=True, timeout=30)
        print(out.stdout.rstrip() or out.stderr.rstrip())
        print(f"\nSee the session: `duckflow status -w {playground}` · undo the write: "
              f"`duckflow undo --workspace {playground}`")
    return rc


def protocol_demo(base: Path) -> int:
    """Each reply in examples/ through `duckflow protocol parse` (its exit code is shown, not fatal)."""
    from duckflow.channels.cli.main import main as cli

    examples = base / "examples"
    if not examples.is_dir():
        examples = Path(__file__).resolve().parents[2] / "examples"
    kinds = {".symops": "symops", ".dml": "dml", ".json": "json"}
    files = sorted(p for p in examples.glob("*.*") if p.suffix in kinds) if examples.is_dir() else []
    print("\n=== the protocol layer: model replies read into exact actions ===")
    if not files:
        print("(no example replies in examples/ yet: try `duckflow protocol parse --protocol symops FILE`)")
        return 0
    for path in files:
        print(f"\n--- {path.name} ({kinds[path.suffix]}) ---")
        code = cli(["protocol", "parse", "--protocol", kinds[path.suffix], str(path)])
        if code:
            print(f"(exit {code}: this reply could not be read completely; the JSON above says why)")
    return 0


def main() -> int:
    base = Path.cwd()
    rc = companion_demo(base)
    protocol_demo(base)
    return rc


if __name__ == "__main__":
    sys.exit(main())
