"""Aider on the held-out tasks, the same GGUF through llama.cpp's server: the side by side of issue 24.

Starts `python -m llama_cpp.server` with the bundled GGUF on 127.0.0.1, then for each task of
`duckflow bench compliance --set heldout` makes the task's scratch folder, runs aider once on
it (`--edit-format whole` or `diff`, the task's text as the message, the files it names added),
and runs the task's own check (the same check the compliance bench runs on Duckflow's result).
Aider is not a dependency: install it in its own virtual environment (`python -m venv
/tmp/aider-venv && /tmp/aider-venv/bin/pip install aider-chat`) and pass its executable.

Usage: .venv/bin/python scripts/aider_side_by_side.py AIDER_EXE [--model-key coder-1.5b]
       [--format whole|diff] [--tasks a,b] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository's benchmarks/

from benchmarks._compliance_tasks import SETS  # noqa: E402 - after the path
from benchmarks.compliance import check  # noqa: E402
from duckflow.llm.localmodels import BUNDLED, resolve_local  # noqa: E402
from duckflow.protocols.filenames import plausible_paths  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(gguf: Path, port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
                             "--port", str(port), "--n_ctx", "8192", "--n_threads", "2", "--model_alias", "local"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2)
            return proc
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit("llama_cpp.server did not start")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("aider")
    ap.add_argument("--model-key", default="coder-1.5b", choices=sorted(BUNDLED))
    ap.add_argument("--format", default="whole", choices=("whole", "diff"))
    ap.add_argument("--tasks", default="")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    gguf = resolve_local(args.model_key, allow_pip=False).path
    port = free_port()
    server = start_server(gguf, port)
    rows = []
    try:
        for task in SETS["heldout"]:
            if args.tasks and task.name not in args.tasks.split(","):
                continue
            root = Path(tempfile.mkdtemp(prefix=f"aider-{task.name}-"))
            for rel, text in task.files.items():
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_text(text)
            named = [p for p in plausible_paths(task.text, list(task.files)) if "*" not in p]
            env = {**os.environ, "OPENAI_API_KEY": "none", "OPENAI_API_BASE": f"http://127.0.0.1:{port}/v1"}
            started = time.monotonic()
            done = subprocess.run([args.aider, "--model", "openai/local", "--edit-format", args.format,
                                   "--yes-always", "--no-git", "--no-auto-commits", "--no-check-update",
                                   "--no-show-model-warnings", "--analytics-disable", "--map-tokens", "0",
                                   "--no-stream", "--no-pretty", "--message", task.text, *named],
                                  cwd=root, env=env, capture_output=True, text=True, timeout=900)
            wall = time.monotonic() - started
            passed = check(task, root)
            (root / ".aider-output.txt").write_text(done.stdout + "\n--- stderr\n" + done.stderr)
            rows.append({"task": task.name, "pass": passed, "wall_s": round(wall, 1), "exit": done.returncode,
                         "folder": str(root)})
            print(json.dumps(rows[-1]), flush=True)
    finally:
        server.terminate()
        server.wait(timeout=30)
    walls = sorted(r["wall_s"] for r in rows)
    print(f"aider --edit-format {args.format}, {args.model_key}: {sum(r['pass'] for r in rows)}/{len(rows)} pass, "
          f"median {walls[len(walls) // 2] if walls else 0} s a task")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
