"""Token counting: exact offline cl100k (hash-verified) and the calibrated estimate."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest

from duckflow.llm import tokens
from duckflow.llm.tokens import count_tokens, encoding_for_model, estimate_tokens


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    tokens._encoding.cache_clear()
    tokens._available.cache_clear()


def test_known_cl100k_counts() -> None:
    assert count_tokens("hello world") == (2, True, "tiktoken:cl100k_base")
    assert count_tokens("").tokens == 0
    # " world" is one token, "こんにちは世界" is four tokens in cl100k_base.
    assert count_tokens("こんにちは世界").tokens == 4
    enc = tokens.get_encoding()
    assert enc is not None and enc.encode("hello world") == [15339, 1917]


def test_special_token_text_is_counted_as_text() -> None:
    assert count_tokens("<|endoftext|>").tokens > 1


def test_model_families() -> None:
    assert encoding_for_model("openai:gpt-4o-mini") == ("o200k_base", True)
    assert encoding_for_model("gpt-4-turbo") == ("cl100k_base", True)
    assert encoding_for_model("anthropic:claude-3-5-sonnet") == ("cl100k_base", False)
    proxy = count_tokens("hello world", "ollama:llama3:8b")
    assert proxy.tokens == 2 and not proxy.exact and "proxy" in proxy.method


def test_gpt4o_without_o200k_falls_back_honestly(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    real = tokens.find_encoding_file
    monkeypatch.setattr(tokens, "find_encoding_file", lambda n: None if n == "o200k_base" else real(n))
    got = count_tokens("hello world", "gpt-4o")
    assert got.tokens == 2 and not got.exact and "o200k_base not available" in got.method


def test_estimate_when_no_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens, "find_encoding_file", lambda n: None)
    got = count_tokens("hello world, this is a test")
    assert not got.exact and got.method.startswith("estimate:")
    assert got.tokens == estimate_tokens("hello world, this is a test") == 7


def test_estimate_is_calibrated_for_japanese() -> None:
    text = "ユーザーは`main.py`の編集を望んでいる。まず中身を読む必要がある。" * 20
    exact = count_tokens(text).tokens
    assert abs(estimate_tokens(text) - exact) / exact < 0.35


def test_gz_file_from_dir_is_hash_verified(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    src = tokens.find_encoding_file("cl100k_base")
    assert src is not None
    folder = tmp_path / "tok"
    folder.mkdir()
    (folder / "cl100k_base.tiktoken.gz").write_bytes(gzip.compress(src.read_bytes()))
    monkeypatch.setenv("DUCKFLOW_TOKENIZER_DIR", str(folder))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    assert tokens.find_encoding_file("cl100k_base") is not None
    assert count_tokens("hello world").exact


def test_corrupted_file_is_rejected(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    src = tokens.find_encoding_file("cl100k_base")
    assert src is not None
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "cl100k_base.tiktoken").write_bytes(src.read_bytes()[:-40] + b"\n")
    monkeypatch.setenv("DUCKFLOW_TOKENIZER_DIR", str(folder))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    got = count_tokens("hello world")
    assert not got.exact and got.method.startswith("estimate:")


def test_import_does_not_load_tiktoken() -> None:
    code = "import sys, duckflow.llm.tokens; print('tiktoken' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr
