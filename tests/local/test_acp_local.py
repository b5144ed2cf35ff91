"""An editor over ACP with the bundled model: a real ACP client drives `duckflow acp --model local:default`."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.local.conftest import needs_llama

pytest.importorskip("acp", reason="the acp extra is not installed: pip install 'duckflow[acp]'")
pytestmark = [pytest.mark.local_model, needs_llama, pytest.mark.timeout(1800)]


async def test_an_editor_task_with_the_bundled_model(default_model_home: Path, tmp_path: Path) -> None:
    from acp import spawn_agent_process

    from tests.channels.acp.conftest import REPO, EditorClient, child_env

    ws = tmp_path / "ws"
    ws.mkdir()
    client = EditorClient()
    client.answers = [("allow", "")] * 8
    env = {**child_env(tmp_path / "home"), "HOME": os.environ.get("HOME", str(tmp_path)),
           "DUCKFLOW_LOCAL_DEFAULT": os.environ.get("DUCKFLOW_LOCAL_DEFAULT", "qwen2.5-coder-0.5b")}
    stderr = tmp_path / "stderr.txt"
    with stderr.open("wb") as err:
        async with spawn_agent_process(client, sys.executable, "-m", "duckflow", "acp", "--model", "local:default",
                                       env=env, cwd=REPO, transport_kwargs={"stderr": err}) as (conn, _):
            await asyncio.wait_for(conn.initialize(protocol_version=1), 60)
            sid = (await asyncio.wait_for(conn.new_session(cwd=str(ws), mcp_servers=[]), 120)).session_id
            done = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[
                {"type": "text", "text": "Create hello.py that prints hello"}]), 1500)
    assert done.stop_reason == "end_turn", stderr.read_text()[-2000:]
    assert client.asked, client.text()  # the write was asked in the editor, not done unasked
    out = subprocess.run([sys.executable, "hello.py"], cwd=ws, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and "hello" in out.stdout.lower(), client.text()
    written = [c for calls in client.calls().values() for u in calls if u.status == "completed"
               for c in (u.content or []) if c.type == "diff"]
    assert any(d.path == str(ws / "hello.py") and "hello" in d.new_text.lower() for d in written)
    assert "Traceback" not in stderr.read_text()
