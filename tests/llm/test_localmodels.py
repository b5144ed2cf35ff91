"""Installing the bundled model: parts joined, size and sha256 checked, a mismatch refused."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from duckflow.llm import localmodels as lm


def _parts(tmp_path: Path, chunks: list[bytes]) -> list[Path]:
    out = []
    for i, data in enumerate(chunks, 1):
        p = tmp_path / f"part{i:02d}.bin"
        p.write_bytes(data)
        out.append(p)
    return out


def test_join_checks_size_and_hash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chunks = [b"GGUF" + b"a" * 100, b"b" * 50, b"c" * 7]
    whole = b"".join(chunks)
    monkeypatch.setattr(lm, "DEFAULT_SIZE", len(whole))
    monkeypatch.setattr(lm, "DEFAULT_SHA256", hashlib.sha256(whole).hexdigest())
    target = lm.join_parts(_parts(tmp_path, chunks), tmp_path / "m" / "model.gguf", say=lambda _: None)
    assert target.read_bytes() == whole
    lm.verify(target, len(whole), hashlib.sha256(whole).hexdigest())  # stamped: passes again
    assert not list((tmp_path / "m").glob(".*part"))  # no temporary file left behind


def test_a_changed_part_is_refused_and_nothing_is_left(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    good = [b"x" * 10, b"y" * 10]
    monkeypatch.setattr(lm, "DEFAULT_SIZE", 20)
    monkeypatch.setattr(lm, "DEFAULT_SHA256", hashlib.sha256(b"".join(good)).hexdigest())
    bad = [b"x" * 10, b"z" * 10]  # same size, other bytes
    with pytest.raises(lm.ModelInstallError, match="refusing the joined model") as info:
        lm.join_parts(_parts(tmp_path, bad), tmp_path / "m" / "model.gguf", say=lambda _: None)
    assert "local:/path" in (info.value.hint or "")
    assert not (tmp_path / "m" / "model.gguf").exists()
    with pytest.raises(lm.ModelInstallError, match="more than"):
        lm.join_parts(_parts(tmp_path, [b"x" * 30]), tmp_path / "m" / "model.gguf", say=lambda _: None)


def test_verify_rehashes_a_file_that_changed_after_its_check(tmp_path: Path) -> None:
    f = tmp_path / "m.gguf"
    f.write_bytes(b"abc")
    digest = hashlib.sha256(b"abc").hexdigest()
    lm.verify(f, 3, digest)
    f.write_bytes(b"abd")  # same size, new mtime: the stamp no longer matches
    with pytest.raises(lm.ModelInstallError, match="sha256"):
        lm.verify(f, 3, digest)
    with pytest.raises(lm.ModelInstallError, match="bytes"):
        lm.verify(f, 4, digest)


def test_default_without_wheels_and_without_pip_says_how(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DUCKFLOW_MODELS_DIR", str(tmp_path / "store"))
    monkeypatch.setattr(lm.modelstore, "installed_parts", lambda model: None)
    with pytest.raises(lm.ModelInstallError, match="not installed") as info:
        lm.resolve_local("default", allow_pip=False)
    assert "duckflow models install" in (info.value.hint or "")


def test_paths_and_sizes(tmp_path: Path) -> None:
    gguf = tmp_path / "Qwen2.5-7B-Instruct-Q4.gguf"
    gguf.write_bytes(b"GGUF")
    info = lm.resolve_local(str(gguf))
    assert info.path == gguf.resolve() and info.params_b == 7.0
    assert lm.resolve_local("default", local_path=str(gguf)).path == gguf.resolve()
    assert lm._guess_params("SmolLM2-135M-Instruct.gguf") == 0.135
    with pytest.raises(lm.ModelInstallError, match="no GGUF"):
        lm.resolve_local(str(tmp_path / "missing.gguf"))
