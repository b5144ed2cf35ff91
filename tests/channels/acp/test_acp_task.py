"""A whole task from an editor over ACP: a real client launches `duckflow acp` and drives it (ScriptedModel).

initialize → session/new → a prompt whose edits stream as updates (prose, tool calls with
diffs) and ask permission: allowed once, then rejected with words (the companion takes them
as the correction, as the terminal's "no" with words), then allowed; a second prompt is
cancelled mid-turn (stopReason "cancelled"); a new process loads the session and replays it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.channels.acp.conftest import EditorClient, duckflow_acp, write_script

OLD = "def add(a, b):\n    return a + b\n"
NEW = OLD + "\n\ndef sub(a, b):\n    return a - b\n"


def _decision(step: str, say: str, pattern: str = "base_main_specialized", next_step: str = "continue") -> dict:
    return {"decision": {"step": step, "pattern": pattern, "next_step": next_step, "rationale": say, "say": say}}


async def test_an_editor_runs_a_whole_task_over_acp(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calc.py").write_text(OLD)
    marker = tmp_path / "waiting"
    script = write_script(tmp_path / "script.json", [
        _decision("EXECUTION", "I will add sub to calc.py."),
        {"tool": "write_file", "args": {"path": "calc.py", "content": NEW}},
        _decision("EXECUTION", "Now the notes."),
        {"tool": "write_file", "args": {"path": "notes.txt", "content": "sub added\n"}},
        _decision("EXECUTION", "Writing NOTES.md as you asked."),
        {"tool": "write_file", "args": {"path": "NOTES.md", "content": "sub added\n"}},
        _decision("DONE", "Added sub and NOTES.md.", pattern="base_main", next_step="done"),
        {"wait": str(marker)},
    ])
    client = EditorClient()
    client.answers = [("allow", ""), ("reject", "call it NOTES.md instead"), ("allow", "")]
    stderr = tmp_path / "stderr.txt"
    async with duckflow_acp(script, ws, tmp_path / "home", stderr, client) as conn:
        init = await asyncio.wait_for(conn.initialize(protocol_version=1), 30)
        assert init.protocol_version == 1 and init.agent_capabilities.load_session is True
        session = await conn.new_session(cwd=str(ws), mcp_servers=[])
        sid = session.session_id

        done = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[
            {"type": "text", "text": "add a sub function to calc.py"}]), 60)
        assert done.stop_reason == "end_turn", client.text()
        # the effects: the allowed write happened, the rejected one did not, the correction was followed
        assert (ws / "calc.py").read_text() == NEW
        assert not (ws / "notes.txt").exists()
        assert (ws / "NOTES.md").read_text() == "sub added\n"
        # three permission requests with the three options, each about the call it names
        assert len(client.asked) == 3
        first, options = client.asked[0]
        assert [o.kind for o in options] == ["allow_once", "allow_always", "reject_once"]
        assert first.status == "pending" and first.kind == "edit" and "calc.py" in first.title
        diff = next(c for c in first.content if c.type == "diff")
        assert diff.path == str(ws / "calc.py") and diff.old_text == OLD and diff.new_text == NEW
        # streamed: prose, and each write as a tool call that ends completed with the diff written
        assert "I will add sub to calc.py." in client.text()
        assert "Added sub and NOTES.md." in client.text()
        calls = client.calls()
        calc = calls[first.tool_call_id]
        assert calc[0].session_update == "tool_call" and calc[0].status == "pending"
        assert calc[-1].status == "completed"
        written = next(c for c in calc[-1].content if c.type == "diff")
        assert written.old_text == OLD and written.new_text == NEW
        rejected = calls[client.asked[1][0].tool_call_id]
        assert all(u.status != "completed" for u in rejected)

        # a second prompt, cancelled while the model works: the turn stops, the process goes on
        turn = asyncio.create_task(conn.prompt(session_id=sid, prompt=[{"type": "text", "text": "now add mul"}]))
        for _ in range(300):
            if marker.exists():
                break
            await asyncio.sleep(0.1)
        assert marker.exists(), stderr.read_text()[-2000:]
        await conn.cancel(session_id=sid)
        stopped = await asyncio.wait_for(turn, 20)
        assert stopped.stop_reason == "cancelled"

    # the session persists: a new process loads it and replays what was said
    again = EditorClient()
    async with duckflow_acp(script, ws, tmp_path / "home", stderr, again) as conn:
        await asyncio.wait_for(conn.initialize(protocol_version=1), 30)
        loaded = await asyncio.wait_for(conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[]), 30)
        assert loaded is not None
        assert "add a sub function to calc.py" in again.text("user_message_chunk")
        assert "now add mul" in again.text("user_message_chunk")
        assert "Added sub and NOTES.md." in again.text()
        missing = None
        try:
            await conn.load_session(cwd=str(ws), session_id="no-such-session", mcp_servers=[])
        except Exception as exc:  # noqa: BLE001 - the JSON-RPC error is what is checked
            missing = exc
        assert missing is not None and getattr(missing, "code", None) == -32002
    assert "Traceback" not in stderr.read_text()
