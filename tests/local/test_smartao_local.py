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
    """Every criterion scored with its own reason, or, when the small model pastes one reason under
    several criteria (the 0.5B often does), a clear refusal after one re-ask: never a made-up score."""
    from duckflow.apps.smartao.ask import EssayError

    model = get_model("local:default")
    log = AgentLog()
    try:
        ev = await EvalAgent(model).run(texts.ESSAY_EN, session="essay:local", log=log)
    except EssayError as exc:
        assert "no usable answer after a re-ask" in exc.message and log.calls == 2
        return
    assert [s["criterion"] for s in ev.scores] == ["motivation", "evidence", "reflection", "fit", "expression"]
    assert all(1 <= s["level"] <= s["max"] and s["reason"].strip() for s in ev.scores)
    assert 0 <= ev.total <= 100 and log.calls <= 2


def test_essay_draft_runs_on_the_bundled_model_from_the_command_line(default_model_home: Path,
                                                                     tmp_path: Path) -> None:
    # it died with SIGSEGV (exit 139) before the first token: the draft's JSON schema became a
    # grammar nested 20,000 deep (see llm.constrain.grammar_schema)
    import json
    import os
    import subprocess
    import sys

    essay = tmp_path / "essay.txt"
    essay.write_text("I joined the robotics club in my second year. We built a small robot.\n")
    src = str(Path(__file__).resolve().parents[2] / "src")
    proc = subprocess.run([sys.executable, "-m", "duckflow", "essay", "draft", str(essay), "--model", "local:default",
                           "--json"], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": src})
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert report["task"] == "draft" and report["tokens"]["calls"] >= 1
