"""The editor's answers over ACP, as a person's in the terminal (a real client drives `duckflow acp`, ScriptedModel).

A plain reject asks what to do instead and the next prompt is that answer (the terminal's
"no" then words); allow-always lets the session's next workspace change through without
asking; a command runs in Duckflow's box and its result is the tool call's update; a file the
person links is read through the editor's fs/read_text_file (its unsaved text).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from acp.schema import ClientCapabilities, FileSystemCapabilities

from duckflow.workspace.sandbox import bwrap_usable
from tests.channels.acp.conftest import EditorClient, duckflow_acp, write_script


def _decision(step: str, say: str, pattern: str = "base_main_specialized", next_step: str = "continue") -> dict:
    return {"decision": {"step": step, "pattern": pattern, "next_step": next_step, "rationale": say, "say": say}}


async def test_a_plain_reject_takes_the_next_prompt_as_what_to_do_instead(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    script = write_script(tmp_path / "script.json", [
        _decision("EXECUTION", "Writing notes.txt."),
        {"tool": "write_file", "args": {"path": "notes.txt", "content": "one\n"}},
        _decision("EXECUTION", "Writing NOTES.md instead."),
        {"tool": "write_file", "args": {"path": "NOTES.md", "content": "one\n"}},
        _decision("EXECUTION", "And a second note."),
        {"tool": "write_file", "args": {"path": "MORE.md", "content": "two\n"}},
        _decision("EXECUTION", "Checking it runs."),
        {"tool": "execute_shell", "args": {"command": "python3 calc.py"}},
        _decision("DONE", "All written.", pattern="base_main", next_step="done"),
    ])
    client = EditorClient()
    client.answers = [("reject", ""), ("allow_always", ""), ("allow", "")]
    stderr = tmp_path / "stderr.txt"
    async with duckflow_acp(script, ws, tmp_path / "home", stderr, client) as conn:
        caps = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=False))
        await asyncio.wait_for(conn.initialize(protocol_version=1, client_capabilities=caps), 30)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        link = {"type": "resource_link", "name": "calc.py", "uri": f"file://{ws / 'calc.py'}"}
        first = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[
            {"type": "text", "text": "write a note about calc.py"}, link]), 60)
        assert first.stop_reason == "end_turn"
        assert client.reads == [str(ws / "calc.py")]  # the linked file, read through the editor
        assert not (ws / "notes.txt").exists()
        assert "What should it do instead?" in client.text()
        assert "Files the person attached" not in client.text()  # the message is not read back
        assert len(client.asked) == 1

        second = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[
            {"type": "text", "text": "name it NOTES.md"}]), 60)
        assert second.stop_reason == "end_turn", client.text()
        assert not (ws / "notes.txt").exists() and (ws / "NOTES.md").read_text() == "one\n"
        # allow-always on NOTES.md: MORE.md is written without a question; the command is asked
        assert (ws / "MORE.md").read_text() == "two\n"
        asked = [call.title for call, _ in client.asked]
        # allow-always: the next write and the command (inside the workspace scope) go through unasked
        asked = [call.title for call, _ in client.asked]
        if bwrap_usable():  # without the box only listed commands go through unasked (docs/gate.md)
            assert asked == ["Create notes.txt — 1 line", "Create NOTES.md — 1 line"], asked
            assert "Approved automatically" in client.text()
        else:
            assert asked[:2] == ["Create notes.txt — 1 line", "Create NOTES.md — 1 line"], asked
        calls = client.calls()
        more = next(u for u in calls.values() if u[0].title.startswith("Create MORE.md"))
        assert more[0].session_update == "tool_call" and more[-1].status == "completed"
        ran = next(u for u in calls.values() if u[0].title == "Run python3 calc.py")
        assert ran[0].kind == "execute" and ran[-1].status == "completed"
        assert ran[-1].title == "Run python3 calc.py → exit 0, 0 lines"  # it ran, in Duckflow's box
        assert "All written." in client.text()

        # the editor's text of the linked file reached the message (replayed from the transcript)
        await asyncio.wait_for(conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[]), 30)
        said = "".join(u.content.text for _, u in client.updates[-200:] if u.session_update == "user_message_chunk")
        assert "# as the editor holds it" in said and "name it NOTES.md" in said
    assert "Traceback" not in stderr.read_text()


async def test_a_cancel_while_the_editor_asks_keeps_the_change_waiting(tmp_path: Path) -> None:
    """Stop while the permission prompt is open: the turn ends "cancelled", nothing is written,
    a second prompt at the same time is refused, and the next prompt asks again."""
    import sys

    from acp import spawn_agent_process

    from tests.channels.acp.conftest import REPO, child_env

    ws = tmp_path / "ws"
    ws.mkdir()
    client = EditorClient()
    opened = asyncio.Event()
    release = asyncio.get_running_loop().create_future()

    async def answer(options: list, session_id: str, tool_call: object, **kw: object) -> object:
        from acp.schema import AllowedOutcome, RequestPermissionResponse

        client.asked.append((tool_call, options))
        if len(client.asked) == 1:
            opened.set()
            return await release  # the person has not answered yet when the turn is stopped
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id="allow"))

    client.request_permission = answer  # type: ignore[method-assign]
    stderr = tmp_path / "stderr.txt"
    with stderr.open("wb") as err:
        async with spawn_agent_process(client, sys.executable, "-m", "duckflow", "acp", "--model", "scripted:demo",
                                       env=child_env(tmp_path / "home"), cwd=REPO,
                                       transport_kwargs={"stderr": err}) as (conn, _):
            await asyncio.wait_for(conn.initialize(protocol_version=1), 30)
            sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            turn = asyncio.create_task(conn.prompt(session_id=sid, prompt=[{"type": "text", "text": "create hello.py"}]))
            await asyncio.wait_for(opened.wait(), 60)
            try:
                await conn.prompt(session_id=sid, prompt=[{"type": "text", "text": "and more"}])
                refused = None
            except Exception as exc:  # noqa: BLE001 - the JSON-RPC error is what is checked
                refused = exc
            assert getattr(refused, "code", None) == -32600  # one prompt at a time per session
            await conn.cancel(session_id=sid)
            stopped = await asyncio.wait_for(turn, 20)
            assert stopped.stop_reason == "cancelled" and not (ws / "hello.py").exists()

            again = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[{"type": "text", "text": "go on"}]), 60)
            assert again.stop_reason == "end_turn"
            assert len(client.asked) == 2 and client.asked[0][0].title == client.asked[1][0].title  # the same change
            assert (ws / "hello.py").exists()
    assert "Traceback" not in stderr.read_text()
