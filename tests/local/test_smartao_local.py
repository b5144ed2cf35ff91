"""SmartAO on the bundled model: every criterion judged with a grounded reason in the essay's language, or "could not be judged"."""

from __future__ import annotations

from pathlib import Path

import pytest

from duckflow.apps.smartao.ask import AgentLog
from duckflow.apps.smartao.eval_agent import EvalAgent
from duckflow.llm.registry import get_model
from tests.apps.smartao import texts
from tests.local.conftest import needs_llama

pytestmark = [pytest.mark.local_model, needs_llama, pytest.mark.timeout(900)]


async def test_eval_agent_judges_each_criterion_from_the_essays_sentences_with_the_bundled_model(
        default_model_home: Path) -> None:
    """Each criterion is judged with a reason quoting the essay, in its language, or shown as
    "could not be judged" after one re-ask: never a made-up score or an ungrounded reason."""
    from duckflow.apps.smartao.evidence import denies, in_language

    model = get_model("local:default")
    for essay, lang in ((texts.ESSAY_EN, "en"), (texts.ESSAY_JA, "ja")):
        ev = await EvalAgent(model, mode="steps").run(essay, session="essay:local", log=AgentLog())
        assert [s["criterion"] for s in ev.scores] == ["motivation", "evidence", "reflection", "fit", "expression"]
        for s in ev.scores:
            if s["level"] is None:
                assert s["reason"].startswith("could not be judged" if lang == "en" else "判定できませんでした")
                continue
            assert s["quotes"] and all(q["text"] in essay.splitlines()[q["line"] - 1] for q in s["quotes"])
            own = s["reason"].split(" — ", 1)[1]
            assert in_language(own, lang), s["reason"]
            assert not (s["level"] >= 3 and denies(own, lang)), s["reason"]


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
