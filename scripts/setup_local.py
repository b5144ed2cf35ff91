"""Set up the offline model for `make run` / `make test`: llama-cpp-python built once, then the model.

1. llama-cpp-python has no binary wheel for this platform on PyPI, so it is built from source
   once with `pip wheel` into a persistent cache (`DUCKFLOW_WHEELS`, default
   ~/.cache/duckflow/wheels) and installed from there on every later run (no rebuild).
   The build is portable x86-64 (AVX2, no AVX-512/AMX): a native build uses AMX tile
   instructions wherever the CPU lists them, and a virtual machine that lists but does not
   enable them crashes on the first batch (seen on this project's CI machine).
2. `duckflow models install all`: the 0.5B model and SmolLM2 (data-only wheels, verified,
   stored once per machine); then the 1.5B model (`coder-1.5b`, 1.1 GB) when this machine can
   afford it — the same rule `local:default` picks by (2 cores, 3 GB free; llm/localmodels.py).
   On the everyday tasks it passes more in about the same wall time (docs/benchmarks.md).
   `DUCKFLOW_BIG_MODEL=no` skips it (the tests pin the 0.5B model and do not need it).

Usage: python scripts/setup_local.py   (run by the Makefile with the project's venv python)
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import time
from pathlib import Path

VERSION = "0.3.36"
CMAKE_ARGS = ("-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON "
              "-DGGML_BMI2=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF "
              "-DGGML_AMX_BF16=OFF")
PERCENT = re.compile(r"\[\s*(\d+)%\]")


def say(text: str) -> None:
    print(f"setup: {text}", flush=True)


def installed_version() -> str | None:
    if importlib.util.find_spec("llama_cpp") is None:
        return None
    from importlib.metadata import version

    return version("llama-cpp-python")


def cached_wheel(cache: Path) -> Path | None:
    found = sorted(cache.glob(f"llama_cpp_python-{VERSION}-*.whl"))
    return found[-1] if found else None


def build(cache: Path) -> None:
    cache.mkdir(parents=True, exist_ok=True)
    log = cache / f"llama-cpp-python-{VERSION}-build.log"
    say(f"building llama-cpp-python {VERSION} from source (no wheel exists for this platform): "
        "about 5 minutes on 2 idle cores, longer under load; done once, then reused from "
        f"{cache} (log: {log})")
    env = dict(os.environ, CMAKE_ARGS=CMAKE_ARGS, CMAKE_BUILD_PARALLEL_LEVEL=str(os.cpu_count() or 2))
    argv = [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-binary=llama-cpp-python",
            "-w", str(cache / "tmp"), f"llama-cpp-python=={VERSION}"]
    started = time.monotonic()
    last_pct, last_beat = -10, started
    with log.open("w") as out, subprocess.Popen(argv, env=env, stdout=subprocess.PIPE,
                                               stderr=subprocess.STDOUT, text=True) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            out.write(line)
            m = PERCENT.search(line)
            now = time.monotonic()
            if m and int(m.group(1)) >= last_pct + 10:
                last_pct = int(m.group(1))
                say(f"  compiling llama.cpp: {last_pct:3d}%  ({now - started:.0f}s)")
                last_beat = now
            elif now - last_beat > 60:
                say(f"  still building ({now - started:.0f}s)")
                last_beat = now
        code = proc.wait()
    if code != 0:
        tail = log.read_text().splitlines()[-15:]
        print("\n".join(tail), file=sys.stderr)
        raise SystemExit(f"setup: the llama-cpp-python build failed (exit {code}); full log: {log}")
    for wheel in (cache / "tmp").glob("llama_cpp_python-*.whl"):
        wheel.replace(cache / wheel.name)
    say(f"built in {time.monotonic() - started:.0f}s")


def main() -> int:
    cache = Path(os.environ.get("DUCKFLOW_WHEELS") or Path.home() / ".cache" / "duckflow" / "wheels")
    if installed_version() != VERSION:
        if cached_wheel(cache) is None:
            build(cache)
        else:
            say(f"reusing the llama-cpp-python build in {cache}")
        wheel = cached_wheel(cache)
        assert wheel is not None
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", str(wheel)], check=True)
        # llama.cpp's OpenAI-compatible server, used by the integration tests and by people
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--find-links", str(cache), "--only-binary=llama-cpp-python",
                        f"llama-cpp-python[server]=={VERSION}"], check=True)
    subprocess.run([sys.executable, "-m", "duckflow", "models", "install", "all"], check=True)
    install_big()
    return 0


def install_big() -> None:
    """The 1.5B model, when this machine affords it and nobody said no (a failed download is
    said and skipped: `local:default` is then the 0.5B model)."""
    if os.environ.get("DUCKFLOW_BIG_MODEL", "").lower() in ("no", "0", "false", "off"):
        say("not installing the 1.5B model (DUCKFLOW_BIG_MODEL=no)")
        return
    from duckflow.llm.localmodels import BIG_MIN_CORES, BIG_MIN_FREE_GB, this_machine

    here = this_machine()
    if here.cores < BIG_MIN_CORES or here.free_gb < BIG_MIN_FREE_GB:
        say(f"not installing the 1.5B model: it wants {BIG_MIN_CORES} cores and {BIG_MIN_FREE_GB:.0f} GB free "
            f"({here.cores} cores, {here.free_gb:.1f} GB free here)")
        return
    done = subprocess.run([sys.executable, "-m", "duckflow", "models", "install", "coder-1.5b"])
    if done.returncode != 0:
        say("the 1.5B model could not be installed; local:default is the 0.5B model")


if __name__ == "__main__":
    raise SystemExit(main())
