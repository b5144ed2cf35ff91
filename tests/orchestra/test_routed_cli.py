"""The terminal's front door: a cloud companion model is not called while /local is on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from duckflow.channels.cli.routed import CliConversation
from duckflow.companion.task import outcome_of
from duckflow.config import load_config
from duckflow.llm.scripted import ScriptedModel


async def test_local_only_keeps_a_cloud_companion_model_silent(env: Any, tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr("duckflow.companion.seats._bundled_installed", lambda config: False)  # no local model
    cloud = ScriptedModel([], name="cloud", is_local=False)
    opened = env.open(cloud)
    seen: list[Any] = []
    opened.session.chunks.subscribe(seen.append)  # where the terminal's renderer listens
    talk = CliConversation(opened, config=load_config(env={}))
    assert (await outcome_of(talk.stream("/local"))).ending == "done"
    refused = await outcome_of(talk.stream("hello there"))  # not handed to the companion
    assert refused.ending == "input" and refused.message.startswith("Not sent: local-only mode is on")
    assert "/cloud" in refused.message and "duckflow models install" in refused.message
    assert cloud.requests == []
    assert (await outcome_of(talk.stream("/cloud"))).ending == "done"
    said = [c.data.message for c in seen if c.type == "notice" and c.data.code == "router"]
    assert said[0].startswith("Local-only mode on") and said[-1].startswith("Local-only mode off")
    talk.close()


def test_run_exits_1_when_the_routed_coder_has_no_model(tmp_path: Path, capsys: Any) -> None:
    # `/code2` with no Coder2 model printed the reason and then "done (0 turns)", exit 0
    import json

    from duckflow.channels.cli.main import main

    rc = main(["run", "/code2 fix main.py", "-w", str(tmp_path), "--model", "scripted:demo", "--json"])
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert rc == 1 and out["ok"] is False and out["ending"] == "stopped"
    assert "no model is configured for the coder2 role" in out["message"]
