"""The labelled corpus meets the bars: recall >= 99 %, <= 1 false positive per 10,000 code lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchmarks.security import (
    FP_BAR,
    RECALL_BAR,
    code_texts,
    default_corpus_dir,
    evaluate_code,
    evaluate_positives,
    load_positives,
)

from duckflow.security.sanitizer import Sanitizer

CORPUS = Path(__file__).resolve().parent / "corpus"


def test_bench_finds_this_corpus() -> None:
    assert default_corpus_dir() == CORPUS


def test_corpus_is_large_varied_and_labelled() -> None:
    docs = load_positives(CORPUS)
    labels = [label for d in docs for label in d["labels"]]
    assert len(docs) >= 150 and len(labels) >= 900
    kinds = {label["kind"] for label in labels}
    assert {"aws_access_key", "github_token", "private_key", "jwt", "url_password", "password",
            "email", "phone", "credit_card", "my_number", "address"} <= kinds
    for d in docs:
        for label in d["labels"]:
            assert label["value"] in d["text"]


def test_corpus_file_matches_its_generator() -> None:
    import sys

    sys.path.insert(0, str(CORPUS))
    try:
        import generate  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(CORPUS))
    rebuilt = generate.build()
    stored = load_positives(CORPUS)
    assert [json.loads(json.dumps(d, ensure_ascii=False)) for d in rebuilt] == stored
    assert (CORPUS / "benign_tricky.txt").read_text(encoding="utf-8") == generate.benign_tricky()


def test_recall_on_the_labelled_corpus_meets_the_bar() -> None:
    res = evaluate_positives(load_positives(CORPUS), Sanitizer())
    assert res.recall >= RECALL_BAR, res.missed[:10]
    assert len(res.unexpected) <= res.labels * 0.01, res.unexpected[:10]


def test_false_positives_on_code_meet_the_bar() -> None:
    texts = code_texts(CORPUS, limit_lines=60_000)
    res = evaluate_code(texts, Sanitizer())
    assert res.lines >= 10_000
    assert res.fp_per_10k <= FP_BAR, res.false_positives[:10]


def test_tricky_benign_file_comes_through_unchanged() -> None:
    text = (CORPUS / "benign_tricky.txt").read_text(encoding="utf-8")
    masked = Sanitizer().mask(text)
    assert len(masked.findings) <= text.count("\n") / 10_000 * FP_BAR + 1, masked.findings[:5]


@pytest.mark.parametrize("extra", ["\n", "\r\n"])
def test_line_endings_do_not_hide_secrets(extra: str) -> None:
    text = f"A=1{extra}GITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a{extra}B=2"
    assert "ghp_" not in Sanitizer().mask(text).text
