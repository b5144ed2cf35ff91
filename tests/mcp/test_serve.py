"""`duckflow mcp serve`: driven by the official SDK's client over stdio and streamable HTTP, and by
a second Duckflow as its MCP client. A real subprocess each time; the person's yes is given with
`duckflow approvals grant`, as a person would; the calling agent can never approve."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from duckflow.channels.cli.main import main as cli
from duckflow.llm.scripted import tool_call
from tests.helpers.companion import decision

pytest.importorskip("mcp")
SRC = str(Path(__file__).resolve().parents[2] / "src")


def _env() -> dict[str, str]:
    return {"PYTHONPATH": SRC, "DUCKFLOW_HOME": os.environ["DUCKFLOW_HOME"], "DUCKFLOW_CONFIG": os.devnull,
            "PATH": os.environ.get("PATH", "")}


def _command(ws: Path) -> list[str]:
    return [sys.executable, "-m", "duckflow", "mcp", "serve", "-w", str(ws), "--model", "scripted:demo"]


def _text(result: Any) -> str:
    return "\n".join(str(getattr(b, "text", "")) for b in result.content)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "hello.py").write_text('print("hi")\n', encoding="utf-8")
    return root


async def test_the_sdk_client_over_stdio_reads_and_a_write_waits_for_the_person(
        ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from mcp import Client, StdioServerParameters

    command = _command(ws)
    params = StdioServerParameters(command=command[0], args=command[1:], env=_env())
    async with Client(params, read_timeout_seconds=60) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert {"read_file", "list_files", "search_code", "write_file", "edit_file", "delete_path",
                "execute_shell", "run_tests", "duckflow_task", "duckflow_approved"} <= set(tools)
        assert tools["read_file"].annotations.read_only_hint is True
        assert tools["delete_path"].annotations.destructive_hint is True
        assert tools["write_file"].input_schema["required"] == ["path", "content"]
        read = await client.call_tool("read_file", {"path": "hello.py"})
        assert not read.is_error and _text(read) == 'print("hi")\n'
        outside = await client.call_tool("read_file", {"path": "../secret.txt"})
        assert outside.is_error and "leads out of the workspace" in _text(outside)
        asked = await client.call_tool("write_file", {"path": "new.py", "content": "x = 1\n"})
        said = _text(asked)
        assert not asked.is_error and "Not done yet: a person must approve" in said and "+x = 1" in said
        assert not (ws / "new.py").exists()
        job = said.split("(job ")[1][:8]
        early = await client.call_tool("duckflow_approved", {"job_id": job})
        assert "still waits for a person" in _text(early) and not (ws / "new.py").exists()
        assert cli(["approvals", "grant", job]) == 0  # the person, in their terminal
        capsys.readouterr()
        done = await client.call_tool("duckflow_approved", {"job_id": job})
        assert not done.is_error, _text(done)
        assert (ws / "new.py").read_text() == "x = 1\n"
        again = await client.call_tool("duckflow_approved", {"job_id": job})
        assert again.is_error  # run once: the approval is spent
        task = await client.call_tool("duckflow_task", {"task": "Create hello2.py"})
        text = _text(task)
        assert not task.is_error and "A person must approve job" in text and "duckflow approvals grant" in text
        waiting = text.split("A person must approve job ")[1][:8]
        before = (ws / "hello.py").read_text()
        still = await client.call_tool("duckflow_task", {"task": "continue"})
        assert f"still waits for a person (job {waiting})" in _text(still)
        assert cli(["approvals", "grant", waiting]) == 0
        capsys.readouterr()
        went_on = await client.call_tool("duckflow_task", {"task": "continue"})
        assert not went_on.is_error, _text(went_on)
        assert (ws / "hello.py").read_text() != before  # the approved change was made
        assert "Approved" in _text(went_on)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_the_sdk_client_over_streamable_http(ws: Path) -> None:
    from mcp import Client

    port = _free_port()
    proc = subprocess.Popen([*_command(ws), "--http", str(port)], env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert proc.poll() is None, proc.communicate()[1]
                time.sleep(0.2)
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            listed = await client.call_tool("list_files", {"path": "."})
            assert not listed.is_error and "hello.py" in _text(listed)
            run = await client.call_tool("execute_shell", {"command": "rm -rf ."})
            assert "a person must approve" in _text(run)  # a destructive command: the gate asks
        assert (ws / "hello.py").exists()
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=20)
    assert out == ""  # HTTP: nothing on stdout; the one line on stderr
    assert f"on http://127.0.0.1:{port}/mcp" in err and "Traceback" not in err


def test_a_second_duckflow_uses_it_as_its_mcp_server(tmp_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Duckflow A's companion reads B's workspace unasked (B's read_file is read-only) and its own
    card asks before B's write_file; B's gate would ask again."""
    from tests.mcp.test_client import _run

    command = _command(ws)
    servers = {"b": {"command": command[0], "args": command[1:], "env": {"PYTHONPATH": SRC},
                     "startup_timeout_sec": 60}}
    script = [decision("EXECUTION", "base_main_specialized", rationale="read B's hello.py"),
              tool_call("mcp__b__read_file", path="hello.py"),
              decision("EXECUTION", "base_main_specialized", rationale="write B's new file"),
              tool_call("mcp__b__write_file", path="from_a.py", content="A = 1\n")]
    monkeypatch.setenv("COLUMNS", "200")
    rc, model = _run(tmp_path, monkeypatch, servers, script)
    captured = capsys.readouterr()
    out = captured.out
    assert rc == 4, out + captured.err
    assert 'print(\\"hi\\")' in json.dumps([m.content for m in model.requests[2].messages])  # B's file came back
    assert "Use write_file of the MCP server b" in out  # A's own card
    assert not (ws / "from_a.py").exists()
