"""The malformed-reply corpus: >= 98 % exact recovery and no executable action not intended."""

from __future__ import annotations

import json
from pathlib import Path

from duckflow.protocols.symops.corpus import evaluate

CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "symops"


def test_corpus_meets_the_bars() -> None:
    report = evaluate(CORPUS)
    assert report["cases"] >= 60
    assert report["unintended_executable"] == 0, report["failures"]
    assert report["recovery_rate"] >= 0.98, report["failures"]
    assert report["pass"] is True


def test_every_case_has_an_expected_file_with_the_agreed_shape() -> None:
    replies = sorted(CORPUS.glob("*.txt"))
    assert len(replies) >= 60
    for reply in replies:
        meta = json.loads(reply.with_name(reply.stem + ".expected.json").read_text(encoding="utf-8"))
        assert set(meta) == {"request", "note", "actions"}
        for a in meta["actions"]:
            assert set(a) == {"type", "path", "content"}


def test_evaluate_counts_unintended_actions(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("$ run @ rm -rf build\n", encoding="utf-8")
    (tmp_path / "a.expected.json").write_text('{"request": null, "note": "", "actions": []}', encoding="utf-8")
    (tmp_path / "b.txt").write_text("$ run @ ls\n", encoding="utf-8")
    (tmp_path / "b.expected.json").write_text(
        '{"request": null, "note": "", "actions": [{"type": "run", "path": "ls", "content": null}]}',
        encoding="utf-8",
    )
    report = evaluate(tmp_path)
    assert (report["cases"], report["exact"], report["unintended_executable"]) == (2, 1, 1)
    assert report["recovery_rate"] == 0.5 and report["pass"] is False
