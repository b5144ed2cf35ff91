"""SmartAO on the bundled model: the rubric scores come back schema-valid under constrained decoding."""

from __future__ import annotations

from pathlib import Path

import pytest

from duckflow.apps.smartao.ask import AgentLog
from duckflow.apps.smartao.rubric import EvalAgent
from duckflow.llm.registry import get_model
from tests.apps.smartao import texts
from tests.local.conftest import needs_llama

pytestmark = [pytest.mark.local_model, needs_llama, pytest.mark.timeout(900)]


async def test_eval_agent_scores_every_criterion_with_the_bundled_model(default_model_home: Path) -> None:
    model = get_model("local:default")
    log = AgentLog()
    ev = await EvalAgent(model).run(texts.ESSAY_EN, session="essay:local", log=log)
    assert [s["criterion"] for s in ev.scores] == ["motivation", "evidence", "reflection", "fit", "expression"]
    assert all(1 <= s["level"] <= s["max"] and s["reason"].strip() for s in ev.scores)
    assert 0 <= ev.total <= 100 and log.calls <= 2
