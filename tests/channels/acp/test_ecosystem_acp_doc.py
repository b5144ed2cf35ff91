"""docs/ecosystem.md's editor configs, as written: each block's command is launched and drives a task over ACP.

The Zed and JetBrains blocks are read as JSON, the CodeCompanion and avante blocks for their
command line; each one is started exactly so (the `duckflow` on PATH, its args, its env) with
the real ACP client, and creates hello.py after the permission request is allowed, then
`/undo` takes it back. The model is `scripted:demo` through DUCKFLOW_MODEL, which the doc says
picks the model.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.channels.acp.conftest import REPO, EditorClient, child_env

pytest.importorskip("acp", reason="the acp extra is not installed: pip install 'duckflow[acp]'")
from acp import spawn_agent_process  # noqa: E402

DOC = REPO / "docs" / "ecosystem.md"


def _section() -> str:
    text = DOC.read_text()
    start = text.index("## Editors over ACP")
    end = text.find("\n## ", start + 3)
    return text[start:] if end == -1 else text[start:end]


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", _section(), flags=re.S)


def _lua_strings(body: str) -> list[str]:
    return re.findall(r'"([^"]*)"', body)


def editor_configs() -> dict[str, tuple[str, list[str], dict[str, str]]]:
    """Each editor's (command, args, env) as its block says."""
    out: dict[str, tuple[str, list[str], dict[str, str]]] = {}
    zed, jetbrains = (json.loads(b) for b in _blocks("json"))
    for name, conf in (("zed", zed), ("jetbrains", jetbrains)):
        server = conf["agent_servers"]["Duckflow"]
        out[name] = (server["command"], list(server["args"]), dict(server["env"]))
    codecompanion, avante = _blocks("lua")
    assert 'extend("goose"' in codecompanion
    line = _lua_strings(re.search(r"default = \{([^}]*)\}", codecompanion).group(1))  # type: ignore[union-attr]
    out["codecompanion"] = (line[0], line[1:], {})
    provider = re.search(r"acp_providers = \{\s*duckflow = \{(.*?)\n    \},", avante, flags=re.S).group(1)  # type: ignore[union-attr]
    command = re.search(r'command = "([^"]+)"', provider).group(1)  # type: ignore[union-attr]
    args = _lua_strings(re.search(r"args = \{([^}]*)\}", provider).group(1))  # type: ignore[union-attr]
    out["avante"] = (command, args, {})
    return out


def test_every_editor_block_names_duckflow_acp() -> None:
    configs = editor_configs()
    assert set(configs) == {"zed", "jetbrains", "codecompanion", "avante"}
    for command, args, _ in configs.values():
        assert command == "duckflow" and args[:1] == ["acp"]
    assert json.loads(_blocks("json")[0])["agent_servers"]["Duckflow"]["type"] == "custom"  # Zed's custom agent
    assert "pip install 'duckflow[acp]'" in _blocks("sh")[0]


def _duckflow() -> str:
    beside = Path(sys.executable).parent / "duckflow"
    found = shutil.which("duckflow") or (str(beside) if beside.exists() else None)
    if found is None:
        pytest.skip("the `duckflow` command is not installed (pip install -e .)")
    return found


@pytest.mark.parametrize("editor", ["zed", "jetbrains", "codecompanion", "avante"])
async def test_the_block_as_written_runs_a_task(editor: str, tmp_path: Path) -> None:
    command, args, env = editor_configs()[editor]
    ws = tmp_path / "project"
    ws.mkdir()
    client = EditorClient()
    client.answers = [("allow", "")]
    child = {**child_env(tmp_path / "home"), **env, "DUCKFLOW_MODEL": "scripted:demo",
             "PATH": f"{Path(_duckflow()).parent}:/usr/bin:/bin"}
    stderr = tmp_path / "stderr.txt"
    with stderr.open("wb") as err:
        async with spawn_agent_process(client, command, *args, env=child, cwd=ws,
                                       transport_kwargs={"stderr": err}) as (conn, _):
            await asyncio.wait_for(conn.initialize(protocol_version=1), 30)
            sid = (await asyncio.wait_for(conn.new_session(cwd=str(ws), mcp_servers=[]), 30)).session_id
            done: Any = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[
                {"type": "text", "text": "create hello.py"}]), 60)
            assert done.stop_reason == "end_turn", stderr.read_text()[-1500:]
            assert len(client.asked) == 1 and (ws / "hello.py").exists()
            undone = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[{"type": "text", "text": "/undo"}]), 60)
            assert undone.stop_reason == "end_turn" and not (ws / "hello.py").exists()
    assert "Traceback" not in stderr.read_text()
