"""The prompt library: agents' prompts as data files per language (en, ja), chosen by the language."""

from __future__ import annotations

import json
import tomllib
from importlib import resources

import pytest

from duckflow.apps.smartao.ask import AgentLog
from duckflow.apps.smartao.draft import DraftAgent
from duckflow.apps.smartao.eval_agent import EvalAgent
from duckflow.core.prompt_library import PromptLibrary, PromptNotFound
from duckflow.llm.scripted import ScriptedModel, reply
from tests.apps.smartao import texts


def _file(lang: str) -> dict[str, dict[str, str]]:
    raw = resources.files("duckflow.apps.smartao").joinpath(f"prompts/{lang}.toml").read_text(encoding="utf-8")
    return tomllib.loads(raw)


def test_both_languages_define_the_same_prompts() -> None:
    lib = PromptLibrary("duckflow.apps.smartao")
    assert lib.languages() == ["en", "ja"] and lib.ids("en") == lib.ids("ja")
    assert {"style.system", "draft.system", "eval.system", "draft.depth_3"} <= set(lib.ids("en"))


async def test_the_essay_language_chooses_the_file_the_agent_is_given() -> None:
    from tests.apps.smartao.judges import Judge

    for essay, lang, shows in ((texts.JA_OTHER, "ja", "具体的な場面がある"), (texts.EN_OTHER, "en", "A scene is told.")):
        for mode, key in (("whole", "system"), ("steps", "steps_system")):
            judge = Judge({c: ([1], [{"level": 4, "shows": f"{shows}{i}", "missing": ""}])
                           for i, c in enumerate(("motivation", "evidence", "reflection", "fit", "expression"))})
            model = ScriptedModel(judge.steps())
            await EvalAgent(model, mode=mode).run(essay, session="s", log=AgentLog())
            assert model.requests[0].messages[0].content == _file(lang)["eval"][key]
    model = ScriptedModel([reply(json.dumps({"body": texts.JA_OTHER + "さらに［どの活動？］"}))])
    await DraftAgent(model, depth=3).run(texts.JA_OTHER, session="s", log=AgentLog())
    system = model.requests[0].messages[0].content
    assert system.startswith(_file("ja")["draft"]["system"]) and "深さ: " + _file("ja")["draft"]["depth_3"] in system


def test_a_missing_id_falls_back_to_english_then_is_named() -> None:
    lib = PromptLibrary("duckflow.apps.smartao")
    assert lib.get("draft.depth", "fr", goal="x") == "Depth: x"
    with pytest.raises(PromptNotFound, match="no prompt 'draft.nope'"):
        lib.get("draft.nope", "ja")
