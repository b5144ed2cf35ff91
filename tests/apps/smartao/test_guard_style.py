"""Plagiarism thresholds on crafted English and Japanese texts; headings; the style rules."""

from __future__ import annotations

import pytest

from duckflow.apps.smartao.guard import plagiarism_check, verdict_for
from duckflow.apps.smartao.patch import patch_from_issues
from duckflow.apps.smartao.refs import Reference, RefStore, hashed_embedding, load_references
from duckflow.apps.smartao.style import grammar_check
from duckflow.apps.smartao.text import headings, language, sections
from tests.apps.smartao import texts

REFS = [Reference("refs/en.txt", texts.EN_REF), Reference("refs/ja.txt", texts.JA_REF)]


@pytest.mark.parametrize("essay, verdict, ref", [
    (texts.EN_REF, "block", "refs/en.txt"),
    (texts.EN_PARTIAL, "warn", "refs/en.txt"),
    (texts.EN_OTHER, "pass", None),
    (texts.JA_REF, "block", "refs/ja.txt"),
    (texts.JA_OTHER, "pass", None),
    ("# 見出し\n" + texts.JA_REF.replace("大阪", "神戸"), "block", "refs/ja.txt"),
])
def test_verdicts_on_crafted_texts(essay: str, verdict: str, ref: str | None) -> None:
    result = plagiarism_check(essay, REFS)
    assert result.verdict == verdict, result.to_dict()
    if ref:
        assert result.matches[0].ref == ref
    if verdict == "pass":
        assert result.score < 0.1


def test_japanese_partial_copy_scores_between_unrelated_and_copied() -> None:
    unrelated = plagiarism_check(texts.JA_OTHER, REFS).score
    partial = plagiarism_check(texts.JA_PARTIAL, REFS).score
    assert unrelated < 0.1 < partial < 1.0
    assert plagiarism_check(texts.JA_PARTIAL, REFS, warn_at=partial - 0.01).verdict == "warn"


@pytest.mark.parametrize("score, verdict", [(0.0, "pass"), (0.2799, "pass"), (0.28, "warn"), (0.4, "warn"),
                                            (0.4001, "block"), (1.0, "block")])
def test_threshold_edges_follow_the_seed(score: float, verdict: str) -> None:
    assert verdict_for(score) == verdict


def test_thresholds_are_configurable_and_checked() -> None:
    assert plagiarism_check(texts.EN_PARTIAL, REFS, warn_at=0.1, block_at=0.2).verdict == "block"
    with pytest.raises(ValueError):
        plagiarism_check("x", REFS, warn_at=0.5, block_at=0.4)


def test_language_and_sections_keep_every_character() -> None:
    assert language(texts.ESSAY_JA) == "ja" and language(texts.ESSAY_EN) == "en"
    for essay in (texts.ESSAY_EN, texts.ESSAY_JA, "Title\n=====\nbody\n\n■ 二つ目\n本文", "no headings at all"):
        parts = sections(essay)
        rebuilt = "".join(essay[s.h_start:s.h_end] + essay[s.b_start:s.b_end] for s in parts)
        assert rebuilt == essay
    assert headings(texts.ESSAY_EN) == ["# Motivation", "# Experience"]
    assert headings(texts.ESSAY_JA) == ["【志望動機】", "【活動】"]
    assert headings("Title\n=====\nbody") == ["Title\n====="]


def test_english_rules_fix_only_unambiguous_errors() -> None:
    text = "i think alot of students recieve help , but they could of done more.I want to be a engineer."
    patch, _ = patch_from_issues(text, grammar_check(text))
    assert patch.new_text == ("I think a lot of students receive help, but they could have done more. "
                              "I want to be an engineer.")
    clean = "I think that that is fine. A university and a one-off event, e.g. this."
    assert grammar_check(clean) == []


def test_japanese_rules_and_mixed_style_reported_without_a_fix() -> None:
    text = "私は学びたいです。。朝早く起きれるようになりました。研究をを続けたい。それは重要である。"
    issues = grammar_check(text)
    patch, skipped = patch_from_issues(text, issues)
    assert patch.new_text == "私は学びたいです。朝早く起きられるようになりました。研究を続けたい。それは重要である。"
    # 続けたい。 (plain -たい) and 重要である。 are plain sentences in an essay that is half polite
    assert [(i.rule, text[i.start:i.end]) for i in skipped] == [("ja-mixed-style", "研究をを続けたい。"),
                                                                 ("ja-mixed-style", "それは重要である。")]


def test_ref_store_finds_english_and_japanese_and_reindexes_changes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "a.txt").write_text(texts.EN_REF, encoding="utf-8")
    (tmp_path / "b.md").write_text(texts.JA_REF, encoding="utf-8")
    (tmp_path / "skip.bin").write_bytes(b"\x00")
    (tmp_path / "link.txt").symlink_to("/etc/hostname")
    refs = load_references(tmp_path)
    assert sorted(r.path.rsplit("/", 1)[1] for r in refs) == ["a.txt", "b.md"]
    store = RefStore(tmp_path / "refs.db")
    assert store.index(refs) == 2
    assert store.index(refs) == 0                       # unchanged: nothing re-indexed
    assert store.vector_search("urban planning developers", 1)[0].path.endswith("a.txt")
    assert store.vector_search("まちづくり団体", 1)[0].path.endswith("b.md")
    (tmp_path / "a.txt").write_text(texts.EN_OTHER, encoding="utf-8")
    assert store.index(load_references(tmp_path)) == 1
    assert store.vector_search("grandmother diabetes", 1)[0].path.endswith("a.txt")


def test_hashed_embedding_is_unit_length_and_similarity_follows_wording() -> None:
    def cos(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    ref, copy, other = (hashed_embedding(t) for t in (texts.EN_REF, texts.EN_REF + " Thanks.", texts.EN_OTHER))
    assert abs(cos(ref, ref) - 1) < 1e-9
    assert cos(ref, copy) > 0.9 > cos(ref, other)
