"""`duckflow models install|list|probe`: the bundled offline models; whether a model calls tools.

`install` joins a bundled GGUF once per machine (`llm.modelstore`): `default` (the 0.5B
model), `coder-1.5b` (1.1 GB download), `smollm2`, or `all` (the 0.5B model and smollm2; the
1.5B model only when named, it costs a 1.1 GB download). `list` says what `local:default` is
on this machine and why.

`probe NAME` asks NAME once to call a tool and remembers whether it did (DUCKFLOW_HOME), so the
codec choice (`auto`) uses native tool calling for it, or Sym-Ops.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", required=True)
    inst = sub.add_parser("install", help="install a bundled model (default: Qwen2.5-Coder-0.5B)")
    inst.add_argument("name", nargs="?", default="default", choices=["default", "coder-1.5b", "smollm2", "all"],
                      help="default (Qwen2.5-Coder-0.5B-Instruct, 491 MB), coder-1.5b "
                           "(Qwen2.5-Coder-1.5B-Instruct, 1.1 GB), smollm2 (SmolLM2-135M), or all "
                           "(default and smollm2)")
    sub.add_parser("list", help="show the bundled models and whether they are installed")
    pr = sub.add_parser("probe", help="check once whether a model calls tools natively, and remember it")
    pr.add_argument("name", help="provider:model, e.g. ollama:qwen2.5:7b or openai:gpt-4o-mini")


def _say(text: str) -> None:
    print(f"duckflow models: {text}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    if args.action == "probe":
        return _probe(args.name)
    from duckflow.llm import localmodels as lm

    if args.action == "install":
        names = ["qwen2.5-coder-0.5b", "smollm2"] if args.name == "all" else [args.name]
        for name in names:
            key = "qwen2.5-coder-0.5b" if name == "default" else name
            info = lm.resolve_local(key, say=_say)
            checked = " (size and sha256 verified)" if info.key in lm.BUNDLED else ""
            print(f"{name}: {info.label} at {info.path}{checked}")
        if importlib.util.find_spec("llama_cpp") is None:
            print("note: llama-cpp-python is not installed yet; `make run` builds it "
                  "(or pip install 'duckflow-agent[local]')")
        return 0
    for key, model in lm.BUNDLED.items():
        found = lm.modelstore.stored(model)
        where = f"installed: {found}" if found else (
            "parts installed (joined on first use)" if lm.modelstore.installed_parts(model) else
            f"not installed (duckflow models install {key}, {model.size / 1e9:.1f} GB)")
        print(f"{'local:' + key:22} {model.label:36} {where}")
    small = lm.modelstore._package_file(lm.SMOLLM2_PACKAGE, lm.SMOLLM2_FILE)
    print(f"{'local:smollm2':22} {'SmolLM2-135M-Instruct Q4_1':36} "
          f"{'installed: ' + str(small) if small else 'not installed'}")
    print(lm.pick_default(lm.installed_bundled(), lm.this_machine())[1])
    print("any GGUF: --model local:/path/model.gguf (or models.local_path in the config)")
    return 0


def _probe(name: str) -> int:
    import asyncio

    from duckflow.config import load_config
    from duckflow.errors import DuckflowError
    from duckflow.llm.registry import get_model
    from duckflow.llm.toolcalling import family_verdict, probe, remember

    model = get_model(name, load_config())
    if not getattr(model, "supports_tools", False):
        path = remember(model.name, False, "the provider takes no tool definitions")
        print(f"{model.name}: no native tool calling (the provider takes none); Duckflow uses Sym-Ops. "
              f"Remembered in {path}")
        return 0
    try:
        result = asyncio.run(probe(model))
    except DuckflowError:
        raise
    except Exception as exc:  # a provider failure: one line, nothing remembered
        raise DuckflowError(f"could not probe {model.name}: {type(exc).__name__}: {exc}",
                            hint="check that the model is reachable (`duckflow chat -m NAME`)") from exc
    path = remember(model.name, result.native, result.detail)
    table = family_verdict(model.name)
    verdict = "native tool calling works" if result.native else "native tool calling did not work"
    codec = "native" if result.native else "Sym-Ops"
    print(f"{model.name}: {verdict} ({result.detail}). The codec `auto` now uses {codec} for it.")
    if table is not None and table != result.native:
        print(f"note: the family table says {'native' if table else 'Sym-Ops'}; the probe wins for this model.")
    print(f"Remembered in {path} (probe again to update).")
    return 0
