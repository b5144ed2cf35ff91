"""Scripted end-to-end runs of each SmartAO agent and of the Coordinator's full flow."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from duckflow.apps.smartao.ask import AgentLog, EssayError
from duckflow.apps.smartao.coordinator import Coordinator
from duckflow.apps.smartao.draft import DraftAgent
from duckflow.apps.smartao.eval_agent import EvalAgent
from duckflow.apps.smartao.refs import Reference
from duckflow.apps.smartao.rubric import DEFAULT_RUBRIC, RUBRICS, RubricCache
from duckflow.apps.smartao.store import EssayStore
from duckflow.apps.smartao.style import StyleAgent
from duckflow.apps.smartao.text import headings
from duckflow.llm.scripted import ScriptedModel, reply
from tests.apps.smartao import texts
from tests.apps.smartao.judges import Judge

S1 = "I want to study public health. My grandmother taught me to keep records."
S2 = "I organised a health fair. i learned alot from it."


def body(text: str) -> str:
    return reply(json.dumps({"body": text}))


def scores(**levels: int) -> str:
    return reply(json.dumps({"scores": [{"criterion": k, "level": v, "reason": f"level {v}: {texts.REASONS[k]}",
                                         "to_next": f"more on {k}"}
                                        for k, v in levels.items()]}))


GOOD = dict(motivation=3, evidence=2, reflection=2, fit=1, expression=3)


async def test_draft_replaces_bodies_only_and_headings_never_change() -> None:
    deeper1 = S1 + " Her notebook showed me that small records can change a life. [which year?]"
    model = ScriptedModel([body(deeper1), body(S2 + " It showed me how to plan for others.")])
    result = await DraftAgent(model, depth=2).run(texts.ESSAY_EN, session="s", log=AgentLog())
    assert result.sections_changed == 2
    assert headings(result.patch.new_text) == headings(texts.ESSAY_EN)
    assert deeper1 in result.patch.new_text
    assert all(c.op.value == "replace" for c in result.patch.change_map)
    system = model.requests[0].messages[0].content
    assert "never invent" in system and "+50%" in system       # the rule and the depth reach the model


async def test_draft_refuses_a_body_that_adds_a_heading_or_shrinks() -> None:
    model = ScriptedModel([body(S1 + "\n\n# A new heading\nmore text here"), body("short")])
    result = await DraftAgent(model).run(texts.ESSAY_EN, session="s", log=AgentLog())
    assert result.patch.new_text == texts.ESSAY_EN
    assert [r["reason"].split(" (")[0] for r in result.refused] == [
        "the new body contains a heading line", "the new body is shorter than the original"]


async def test_draft_gives_up_honestly_after_one_reask() -> None:
    model = ScriptedModel([reply("Sure! Here is a better essay."), reply("still not json")])
    with pytest.raises(EssayError, match="no usable answer after a re-ask"):
        await DraftAgent(model).run(texts.ESSAY_EN, session="s", log=AgentLog())
    assert "body" in model.requests[1].messages[-1].content     # the re-ask names what was expected


async def test_style_agent_uses_rules_and_exact_model_quotes_only() -> None:
    answer = {"issues": [{"quote": "health fair", "suggestion": "health fair for seniors", "reason": "specific"},
                         {"quote": "not in the essay", "suggestion": "x", "reason": "made up"},
                         {"quote": "I", "suggestion": "We", "reason": "ambiguous: many matches"}]}
    model = ScriptedModel([reply(json.dumps(answer))])
    result = await StyleAgent(model).run(texts.ESSAY_EN, session="s", log=AgentLog())
    assert "I learned a lot from it." in result.patch.new_text         # rules
    assert "health fair for seniors" in result.patch.new_text          # model, quote found once
    assert result.dropped_quotes == ["not in the essay", "I"]


async def test_eval_scores_every_criterion_caches_and_asks_nothing_the_second_time(tmp_path: Path) -> None:
    store = EssayStore(tmp_path / "s.db")
    judge = Judge({c: ([1], [{"level": 3, "shows": f"{texts.REASONS[c]} in the first sentence.",
                              "missing": f"one concrete example of {c}"}]) for c in GOOD})
    model = ScriptedModel(judge.steps())
    ev = await EvalAgent(model, store=store).run(texts.ESSAY_EN, session="s", log=AgentLog())
    assert [s["criterion"] for s in ev.scores] == list(GOOD)
    assert 0 < ev.total < 100 and not ev.cached and ev.judged == 5
    calls = len(model.requests)
    again = await EvalAgent(model, store=store).run(texts.ESSAY_EN, session="s", log=AgentLog())
    assert again.cached and again.scores == ev.scores and len(model.requests) == calls   # no further call


async def test_eval_never_fills_in_a_level_the_rubric_does_not_define() -> None:
    judge = Judge({c: ([1], [{"level": 9 if c == "motivation" else 2, "shows": f"{texts.REASONS[c]}.",
                              "missing": f"one example of {c}"}]) for c in GOOD})
    ev = await EvalAgent(ScriptedModel(judge.steps())).run(texts.ESSAY_EN, session="s", log=AgentLog())
    motivation = ev.scores[0]
    assert motivation["level"] is None and motivation["reason"] == "could not be judged: the model gave no usable answer"


def test_rubric_cache_hits_until_the_file_changes(tmp_path: Path) -> None:
    cache = RubricCache()
    path = tmp_path / "r.json"
    path.write_bytes(DEFAULT_RUBRIC.read_bytes())
    first, sha = cache.load(path)
    again, sha2 = cache.load(path)
    assert again is first and sha == sha2 and (cache.hits, cache.misses) == (1, 1)
    data = json.loads(path.read_text())
    data["name"] = "changed"
    path.write_text(json.dumps(data))
    assert cache.load(path)[0].name == "changed" and cache.misses == 2
    path.write_text('{"name": "x", "criteria": []}')
    with pytest.raises(EssayError, match="not valid"):
        cache.load(path)
    assert RUBRICS.load(DEFAULT_RUBRIC)[0].criteria


async def test_coordinator_full_flow_merges_checks_and_scores(tmp_path: Path) -> None:
    deeper1 = S1 + " Her notebook showed me that careful records can change how a family lives."
    model = ScriptedModel([body(deeper1), body(S2),                # draft: section 2 unchanged
                           reply(json.dumps({"issues": []}))]      # style: model finds nothing more
                          + Judge({c: ([1], [{"level": 3, "shows": f"{texts.REASONS[c]}.", "missing": f"more on {c}"}])
                                   for c in GOOD}).steps())
    refs = [Reference("refs/en.txt", texts.EN_REF)]
    coord = Coordinator(model=model, refs=refs, store=EssayStore(tmp_path / "s.db"))
    report = await coord.run("full", texts.ESSAY_EN, session="essay:t", rubric=DEFAULT_RUBRIC)
    assert report.patch is not None
    new = report.patch.new_text
    assert deeper1 in new and "I learned a lot from it." in new      # draft + style merged
    assert headings(new) == headings(texts.ESSAY_EN)
    assert report.plagiarism is not None and report.plagiarism.verdict == "pass"
    assert report.evaluation is not None and report.evaluation.scores
    out = report.to_dict()
    assert out["patch"]["summary"]["changes"] == len(report.patch.change_map)
    assert out["tokens"]["calls"] == len(model.requests) > 3   # draft 2, style 1, then the evaluation's questions


async def test_coordinator_reports_conflicts_when_draft_rewrites_what_style_fixes() -> None:
    model = ScriptedModel([body(S1), body("I organised a health fair for my town and learnt to plan."),
                           reply(json.dumps({"issues": []}))])
    report = await Coordinator(model=model).run("full", texts.ESSAY_EN, session="essay:c")
    assert report.patch is not None and "learnt to plan" in report.patch.new_text
    assert {c.dropped.text for c in report.conflicts} == {"I", "a lot"}


async def test_token_guard_warns_as_a_notice_then_blocks_the_session() -> None:
    model = ScriptedModel([body(S1 + " More detail about the records she kept."), body(S2 + " And more.")])
    coord = Coordinator(model=model, warn_at=10, block_at=10_000)
    report = await coord.run("draft", texts.ESSAY_EN, session="essay:tg")
    assert len(report.notices) == 1 and "token" in report.notices[0].lower()
    blocked = Coordinator(model=ScriptedModel([body(S1 + " x" * 40)] * 3), warn_at=1, block_at=2)
    with pytest.raises(EssayError, match="(?i)token"):
        await blocked.run("draft", texts.ESSAY_EN, session="essay:tb")


@pytest.mark.parametrize("request_text, task, source", [
    ("please proofread the grammar", "style", "rules"),
    ("この志望理由書を採点して", "eval", "rules"),
    ("剽窃していないか確認", "check", "rules"),
    ("expand the second paragraph", "draft", "rules"),
    ("hmm", "full", "fallback"),
])
async def test_coordinator_routes_by_rules_then_fallback(request_text: str, task: str, source: str) -> None:
    decision = await Coordinator().route(request_text)
    assert (decision["task"], decision["source"]) == (task, source)


async def test_coordinator_asks_the_classifier_when_no_rule_matches() -> None:
    answer = {"route": "eval", "confidence": 0.9, "reason": "asks how good it is", "evidence": ["how good"]}
    model = ScriptedModel([reply(json.dumps(answer))])
    decision = await Coordinator(model=model).route("how good is it?")
    assert (decision["task"], decision["source"]) == ("eval", "classifier")


def test_reflexion_batch_writes_lessons_once_and_draft_uses_them(tmp_path: Path) -> None:
    store = EssayStore(tmp_path / "s.db")

    class Ev:
        def __init__(self, fit: int) -> None:
            self.scores = [{"criterion": "fit", "name": "Fit", "level": fit, "max": 4,
                            "reason": "the programme is not mentioned"},
                           {"criterion": "expression", "name": "Expression", "level": 4, "max": 4, "reason": "ok"}]
            self.total = 50.0

    for i, fit in enumerate((1, 2, 1)):
        store.save_evaluation(f"e{i}", f"sha{i}", "rub", "m", Ev(fit))
    report = store.apply_reflexion()
    assert report.evaluations == 3
    assert [x["criterion"] for x in report.lessons] == ["fit"]
    assert "the programme is not mentioned" in store.lessons()[0]
    assert store.apply_reflexion().evaluations == 0          # idempotent: nothing new to reflect on
    model = ScriptedModel([body(S1 + " I will join the public health lab."), body(S2 + " It was hard.")])
    import asyncio

    asyncio.run(DraftAgent(model, lessons=store.lessons()).run(texts.ESSAY_EN, session="s", log=AgentLog()))
    assert "the programme is not mentioned" in model.requests[0].messages[0].content


def test_json_settings_constrain_local_backends_and_leave_others_bounded() -> None:
    from duckflow.apps.smartao.ask import json_settings
    from duckflow.apps.smartao.judge import evidence_schema
    from duckflow.llm.openai_compat import OpenAICompatModel

    server = OpenAICompatModel("qwen", provider="openai", base_url="http://127.0.0.1:9/v1", api_key=None)
    local = json_settings(server, evidence_schema(4), 500)
    assert local.max_tokens == 500 and local.temperature is not None and local.temperature <= 0.1
    assert local.extra["response_format"]["schema"]["properties"]["sentences"]
    scripted = json_settings(ScriptedModel([]), evidence_schema(4), 300, temperature=0.0)
    assert (scripted.max_tokens, scripted.temperature, scripted.extra) == (300, 0.0, {})


def test_the_answers_can_only_name_the_essays_sentences_and_the_rubrics_levels() -> None:
    from duckflow.apps.smartao.judge import evidence_schema, level_schema, whole_schema

    evidence = evidence_schema(6).model_json_schema()["properties"]["sentences"]
    assert evidence["items"]["enum"] == [1, 2, 3, 4, 5, 6] and (evidence["minItems"], evidence["maxItems"]) == (1, 3)
    assert level_schema([1, 2, 3, 4]).model_json_schema()["properties"]["level"]["enum"] == [1, 2, 3, 4]
    whole = whole_schema(["motivation", "fit"], [1, 2, 3, 4], 3).model_json_schema()
    item = whole["$defs"]["CriterionJudgement"]["properties"]
    assert item["criterion"]["enum"] == ["motivation", "fit"] and item["sentences"]["items"]["enum"] == [1, 2, 3]
