"""EvalAgent's reasons say what to add; echoes are re-asked; style findings cap expression; progress."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from duckflow.apps.smartao.ask import AgentLog
from duckflow.apps.smartao.rubric import EvalAgent
from duckflow.llm.scripted import ScriptedModel, reply
from tests.apps.smartao import texts
from tests.apps.smartao.test_essay_cli import duckflow, openai_server  # noqa: F401 (a fixture)
from tests.helpers.fakeserver import FakeServer, Reply, openai_stream

CRITERIA = ("motivation", "evidence", "reflection", "fit", "expression")
CLEAN = ("# Motivation\n\nI want to study public health because my grandmother kept careful records of her "
         "diabetes, and reading them with her showed me how small habits change a life.\n")
SLOPPY = "i want to study public health. I learned alot alot from it , and i recieve help.\n"


def _answer(level: int = 3, **reasons: str) -> dict[str, list[dict[str, object]]]:
    return {"scores": [{"criterion": c, "level": level,
                        "reason": reasons.get(c, texts.REASONS[c] + ", but it stays general"),
                        "to_next": f"one concrete episode that shows {c}"} for c in CRITERIA]}


async def test_a_reason_that_only_echoes_the_essay_is_refused_and_reasked() -> None:
    echo = _answer(motivation="I want to study public health because my grandmother kept careful records")
    model = ScriptedModel([reply(json.dumps(echo)), reply(json.dumps(_answer()))])
    ev = await EvalAgent(model).run(CLEAN, session="s", log=AgentLog())
    assert "the reason for 'motivation' only repeats the essay" in model.requests[1].messages[-1].content
    assert ev.scores[0]["reason"] == "a personal reason is named, but it stays general"
    assert ev.scores[0]["to_next"] == "one concrete episode that shows motivation"


async def test_a_level_below_the_top_needs_what_to_add() -> None:
    empty = _answer()
    empty["scores"][1]["to_next"] = ""
    model = ScriptedModel([reply(json.dumps(empty)), reply(json.dumps(_answer()))])
    await EvalAgent(model).run(CLEAN, session="s", log=AgentLog())
    assert "to_next for 'evidence' is empty: say what the essay must add to reach level 4" in \
        model.requests[1].messages[-1].content


async def test_style_findings_feed_and_cap_the_expression_level() -> None:
    model = ScriptedModel([reply(json.dumps(_answer(level=4)))])
    ev = await EvalAgent(model).run(SLOPPY, session="s", log=AgentLog())
    expression = next(s for s in ev.scores if s["criterion"] == "expression")
    assert expression["level"] == 2 and "style check found" in expression["reason"]
    assert expression["to_next"].startswith("fix the ")
    assert next(s for s in ev.scores if s["criterion"] == "fit")["level"] == 4   # other criteria untouched
    prompt = model.requests[0].messages[-1].content
    assert "mechanical error(s)" in prompt and "misspelling: 'alot'" in prompt
    clean = await EvalAgent(ScriptedModel([reply(json.dumps(_answer(level=4)))])).run(CLEAN, session="s", log=AgentLog())
    assert all(s["level"] == 4 for s in clean.scores)


def test_eval_cli_reports_progress_per_criterion_and_what_to_add(tmp_path: Path,
                                                                  openai_server: FakeServer) -> None:  # noqa: F811
    text = json.dumps(_answer(level=2))
    cut = [text.index(f'"{c}"') for c in CRITERIA] + [len(text)]
    pieces = [text[: cut[0]]] + [text[a:b] for a, b in zip(cut, cut[1:], strict=False)]
    openai_server.queue("/v1/chat/completions", Reply(chunks=openai_stream(pieces)))
    essay = tmp_path / "essay.md"
    essay.write_text(CLEAN, encoding="utf-8")
    env = {"OPENAI_BASE_URL": openai_server.url + "/v1", "DUCKFLOW_HOME": str(tmp_path / "home")}
    proc = duckflow("essay", "eval", str(essay), "--model", "openai:tiny", env=env)
    assert proc.returncode == 0, proc.stderr
    progress = [ln for ln in proc.stderr.splitlines() if ln.startswith("evaluating: criterion")]
    assert progress == [f"evaluating: criterion {i} of 5 ({c})…" for i, c in enumerate(CRITERIA, 1)]
    assert "to reach 3: one concrete episode that shows evidence" in proc.stdout


@pytest.mark.parametrize("reason", ["the essay states a goal, but no episode", "志望理由が一般的で経験がない"])
def test_own_words_are_not_an_echo(reason: str) -> None:
    from duckflow.apps.smartao.rubric import echoes

    assert not echoes(reason, CLEAN) and echoes(CLEAN.split("\n")[2][:90], CLEAN)


async def test_draft_says_why_each_section_was_not_changed() -> None:
    from duckflow.apps.smartao.draft import DraftAgent

    essay = "# Motivation\n\nI want to study public health. My grandmother taught me to keep records.\n\n# Plans\n\n# Experience\n\nI organised a health fair.\n"
    model = ScriptedModel([reply(json.dumps({"body": "short"})),
                           reply(json.dumps({"body": "I organised a health fair."}))])
    result = await DraftAgent(model).run(essay, session="s", log=AgentLog())
    assert result.sections_changed == 0
    assert [(u["heading"], u["reason"].split(" (")[0]) for u in result.unchanged] == [
        ("# Motivation", "the new body is shorter than the original"),
        ("# Plans", "the section has no text to deepen"),
        ("# Experience", "the model returned the section as it was")]


def test_draft_cli_prints_the_reason(tmp_path: Path, openai_server: FakeServer) -> None:  # noqa: F811
    openai_server.queue("/v1/chat/completions", Reply(chunks=openai_stream([json.dumps({"body": "Hi."})])))
    essay = tmp_path / "essay.md"
    essay.write_text(CLEAN, encoding="utf-8")
    env = {"OPENAI_BASE_URL": openai_server.url + "/v1", "DUCKFLOW_HOME": str(tmp_path / "home")}
    proc = duckflow("essay", "draft", str(essay), "--model", "openai:tiny", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "not changed: # Motivation — the new body is shorter than the original (3 <" in proc.stdout
    assert "the original is kept" in proc.stdout


async def test_one_reason_pasted_under_every_criterion_is_refused() -> None:
    same = _answer()
    for s in same["scores"]:  # (the bundled model's answer: one sentence with the criterion's name swapped)
        s["reason"] = f"The essay contains multiple errors in the {s['criterion']} statement."
    model = ScriptedModel([reply(json.dumps(same)), reply(json.dumps(_answer()))])
    await EvalAgent(model).run(CLEAN, session="s", log=AgentLog())
    assert "the reason for 'evidence' is the one given for 'motivation'" in model.requests[1].messages[-1].content
