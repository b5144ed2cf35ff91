"""`duckflow models install|list`: install the bundled offline models and say where they are."""

from __future__ import annotations

import argparse
import importlib.util
import sys


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True)
    inst = sub.add_parser("install", help="install a bundled model (default: Qwen2.5-Coder-0.5B)")
    inst.add_argument("name", nargs="?", default="default", choices=["default", "smollm2", "all"],
                      help="default (Qwen2.5-Coder-0.5B-Instruct), smollm2 (SmolLM2-135M), or all")
    sub.add_parser("list", help="show the bundled models and whether they are installed")


def _say(text: str) -> None:
    print(f"duckflow models: {text}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    from duckflow.llm import localmodels as lm

    if args.action == "install":
        names = ["default", "smollm2"] if args.name == "all" else [args.name]
        for name in names:
            info = lm.resolve_local(name, say=_say)
            print(f"{name}: {info.label} at {info.path}" + (" (size and sha256 verified)" if name == "default" else ""))
        if importlib.util.find_spec("llama_cpp") is None:
            print("note: llama-cpp-python is not installed yet; `make run` builds it "
                  "(or pip install 'duckflow-agent[local]')")
        return 0
    rows = [("local:default", lm.models_dir() / lm.DEFAULT_FILE, "Qwen2.5-Coder-0.5B-Instruct Q4_K_M")]
    small = lm._package_file(lm.SMOLLM2_PACKAGE, lm.SMOLLM2_FILE)
    for name, path, label in rows:
        print(f"{name:16} {label:36} {'installed: ' + str(path) if path.is_file() else 'not installed'}")
    print(f"{'local:smollm2':16} {'SmolLM2-135M-Instruct Q4_1':36} "
          f"{'installed: ' + str(small) if small else 'not installed'}")
    print("any GGUF: --model local:/path/model.gguf (or models.local_path in the config)")
    return 0
