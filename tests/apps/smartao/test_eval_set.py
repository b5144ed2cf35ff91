"""The rubric-scored set measures EvalAgent: its levels are the rubric's, and agreement counts right."""

from __future__ import annotations

from duckflow.apps.smartao.rubric import DEFAULT_RUBRIC, RUBRICS
from duckflow.apps.smartao.style import grammar_check
from tests.apps.smartao.eval_set import CRITERIA, SET, agreement


def test_every_intended_level_is_one_the_rubric_defines() -> None:
    rubric, _ = RUBRICS.load(DEFAULT_RUBRIC)
    levels = {c.id: {lv.score for lv in c.levels} for c in rubric.criteria}
    assert tuple(levels) == CRITERIA and 6 <= len(SET) <= 8
    for item in SET:
        assert all(item["levels"][c] in levels[c] for c in CRITERIA), item["id"]


def test_agreement_counts_exact_and_within_one() -> None:
    intended = dict(motivation=1, evidence=2, reflection=3, fit=4, expression=2)
    assert agreement(intended, dict(motivation=1, evidence=3, reflection=1, fit=4)) == (2, 3)


def test_the_weak_essay_has_the_mechanical_errors_its_expression_level_says() -> None:
    weak = next(i for i in SET if i["id"] == "weak")
    strong = next(i for i in SET if i["id"] == "strong")
    assert len(grammar_check(weak["text"])) >= 3 and grammar_check(strong["text"]) == []
