"""The MCP servers an editor passes with session/new are started as the person's own (a real mcp-server-time).

A read-only tool of the editor's server runs unasked and its answer streams as a tool call;
an SSE server is left out with one line the person reads in the first turn."""

from __future__ import annotations

import asyncio
from pathlib import Path

from acp.schema import EnvVariable, McpServerStdio, SseMcpServer

from tests.channels.acp.conftest import EditorClient, duckflow_acp, write_script
from tests.mcp.servers import need


async def test_the_editors_mcp_server_is_started_and_its_read_only_tool_runs_unasked(tmp_path: Path) -> None:
    server = need("mcp-server-time")
    ws = tmp_path / "ws"
    ws.mkdir()
    script = write_script(tmp_path / "script.json", [
        {"decision": {"step": "EXECUTION", "pattern": "base_main_specialized", "rationale": "ask the clock",
                      "say": "Asking the clock."}},
        {"tool": "mcp__clock__get_current_time", "args": {"timezone": "Asia/Tokyo"}},
        {"decision": {"step": "DONE", "next_step": "done", "rationale": "told", "say": "It is evening in Tokyo."}},
    ])
    client = EditorClient()
    stderr = tmp_path / "stderr.txt"
    async with duckflow_acp(script, ws, tmp_path / "home", stderr, client) as conn:
        init = await asyncio.wait_for(conn.initialize(protocol_version=1), 30)
        assert init.agent_capabilities.mcp_capabilities.http is True
        servers = [McpServerStdio(name="clock", command=server, args=["--local-timezone", "UTC"],
                                  env=[EnvVariable(name="TZ", value="UTC")]),
                   SseMcpServer(type="sse", name="old", url="http://127.0.0.1:9/sse", headers=[])]
        sid = (await asyncio.wait_for(conn.new_session(cwd=str(ws), mcp_servers=servers), 60)).session_id
        done = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[
            {"type": "text", "text": "what time is it in Tokyo?"}]), 60)
    assert done.stop_reason == "end_turn", client.text()
    assert client.asked == []  # read-only (the server says so): no permission asked
    ran = [u for calls in client.calls().values() for u in calls]
    assert ran and ran[-1].status == "completed", ([(u.title, u.status) for u in ran], client.text())
    assert "editor's MCP server old was not started" in client.text()
    assert "It is evening in Tokyo." in client.text()
    assert "Traceback" not in stderr.read_text()
