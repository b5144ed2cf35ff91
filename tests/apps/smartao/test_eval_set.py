"""The rubric-scored set measures EvalAgent: its levels are the rubric's, and agreement counts right."""

from __future__ import annotations

from duckflow.apps.smartao.rubric import DEFAULT_RUBRIC, RUBRICS
from duckflow.apps.smartao.style import grammar_check
from tests.apps.smartao.eval_set import CRITERIA, SET, agreement


def test_every_intended_level_is_one_the_rubric_defines() -> None:
    rubric, _ = RUBRICS.load(DEFAULT_RUBRIC)
    levels = {c.id: {lv.score for lv in c.levels} for c in rubric.criteria}
    assert tuple(levels) == CRITERIA and len(SET) >= 12
    for item in SET:
        assert all(item["levels"][c] in levels[c] for c in CRITERIA), item["id"]


def test_every_essay_names_the_sentences_a_good_reason_points_at_in_its_own_text() -> None:
    from duckflow.apps.smartao.text import language

    assert {i["lang"] for i in SET} == {"en", "ja"} and sum(1 for i in SET if i.get("average")) >= 4
    for item in SET:
        assert language(item["text"]) == item["lang"], item["id"]
        assert set(item["points"]) == set(CRITERIA), item["id"]
        for c in CRITERIA:
            assert item["points"][c] and all(p in item["text"] for p in item["points"][c]), (item["id"], c)


def test_the_partly_copied_essay_is_partly_copied() -> None:
    from duckflow.apps.smartao.guard import GuardAgent
    from duckflow.apps.smartao.refs import Reference

    item = next(i for i in SET if i.get("refs"))
    result = GuardAgent([Reference(n, t) for n, t in item["refs"]]).check(item["text"])
    assert 0.28 <= result.score < 0.97 and result.matches[0].passages


def test_agreement_counts_exact_and_within_one() -> None:
    intended = dict(motivation=1, evidence=2, reflection=3, fit=4, expression=2)
    assert agreement(intended, dict(motivation=1, evidence=3, reflection=1, fit=4)) == (2, 3)
    assert agreement(intended, dict(motivation=None, evidence=2)) == (1, 1)   # "could not be judged" agrees with nothing


def test_shown_reasons_are_checked_for_quotes_language_contradiction_and_repetition() -> None:
    from tests.apps.smartao.eval_set import reason_checks

    item = next(i for i in SET if i["id"] == "ja-average")
    good = {"criterion": "reflection", "level": 2, "by": "model",
            "reason": "5行目「この経験から多くのことを学びました。」 — 学んだとだけ書いている。", "to_next": "",
            "quotes": [{"text": "この経験から多くのことを学びました。", "line": 5}]}
    wrong = {"criterion": "evidence", "level": 3, "by": "model", "reason": "2行目 — 具体的な経験が書かれていません。",
             "to_next": "", "quotes": [{"text": "I did it.", "line": 2}]}
    checks = reason_checks(item, [good, wrong])
    assert checks["reflection"] == {"grounded": True, "points_right": True, "language": True,
                                    "contradiction": False, "repeated": False}
    assert checks["evidence"] == {"grounded": False, "points_right": False, "language": True,
                                  "contradiction": True, "repeated": False}


def test_the_weak_essay_has_the_mechanical_errors_its_expression_level_says() -> None:
    weak = next(i for i in SET if i["id"] == "weak")
    strong = next(i for i in SET if i["id"] == "strong")
    assert len(grammar_check(weak["text"])) >= 3 and grammar_check(strong["text"]) == []
