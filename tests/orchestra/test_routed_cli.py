"""The CLI glue: a cloud companion model is not called while /local is on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from duckflow.channels.cli.routed import RoutedInput
from duckflow.config import load_config
from duckflow.llm.scripted import ScriptedModel


async def test_local_only_keeps_a_cloud_companion_model_silent(env: Any, tmp_path: Path) -> None:
    cloud = ScriptedModel([], name="cloud", is_local=False)
    opened = env.open(cloud)
    out = Console(file=open(tmp_path / "out.txt", "w"), width=200)  # noqa: SIM115
    routed = RoutedInput(opened, out, config=load_config(env={}))
    assert await routed.send("/local") is None
    assert await routed.send("hello there") is None  # not handed to the companion
    assert await routed.send("/cloud") is None
    assert await routed.send("hello there") == "hello there"
    out.file.close()
    text = (tmp_path / "out.txt").read_text()
    assert "is a cloud model, so nothing was sent" in text and cloud.requests == []
    routed.close()


def test_run_exits_1_when_the_routed_coder_has_no_model(tmp_path: Path, capsys: Any) -> None:
    # `/code2` with no Coder2 model printed the reason and then "done (0 turns)", exit 0
    import json

    from duckflow.channels.cli.main import main

    rc = main(["run", "/code2 fix main.py", "-w", str(tmp_path), "--model", "scripted:demo", "--json"])
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert rc == 1 and out["ok"] is False and out["ending"] == "stopped"
    assert "no model is configured for the coder2 role" in out["message"]
