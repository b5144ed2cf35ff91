"""Malformed messages to `duckflow acp` each get a JSON-RPC error, and the stream stays in step.

Written as raw lines to the real subprocess (no client library between): text that is not
JSON (-32700), JSON that is not a request (-32600), an unknown method (-32601), wrong params
(-32602), a call before `initialize`, a prompt to a session that does not exist. Every line
on stdout is one JSON-RPC frame, every request is answered once, the next good request is
answered as usual, and stderr holds no traceback.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.channels.acp.conftest import REPO, child_env

pytest.importorskip("acp", reason="the acp extra is not installed: pip install 'duckflow[acp]'")


class Raw:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.frames: list[dict[str, Any]] = []

    async def send(self, line: bytes | str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((line.encode() if isinstance(line, str) else line) + b"\n")
        await self.proc.stdin.drain()

    async def reply(self, req_id: Any = None) -> dict[str, Any]:
        """The next frame (it must be JSON: a desynchronised stream fails here)."""
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), 30)
        assert line, "the agent closed its output"
        frame = json.loads(line)
        assert frame.get("jsonrpc") == "2.0"
        self.frames.append(frame)
        if req_id is not None:
            assert frame.get("id") == req_id, frame
        return frame


def _error(frame: dict[str, Any], code: int) -> None:
    assert "result" not in frame and frame["error"]["code"] == code, frame
    assert isinstance(frame["error"]["message"], str) and frame["error"]["message"]


async def test_every_malformed_message_gets_a_json_rpc_error(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    stderr = tmp_path / "stderr.txt"
    with stderr.open("wb") as err:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "duckflow", "acp", "-w", str(ws), "--model", "scripted:demo",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=err,
            env={**child_env(tmp_path / "home"), "PATH": "/usr/bin:/bin"}, cwd=REPO)
        raw = Raw(proc)
        try:
            # before initialize: refused, not run
            await raw.send('{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}')
            _error(await raw.reply(1), -32600)
            # not JSON, cut JSON, bytes that are not UTF-8, nesting too deep to read
            for line in (b"hello there", b'{"jsonrpc":"2.0","id":2,', b"\xff\xfe{}", b"[" * 100_000):
                await raw.send(line)
                frame = await raw.reply()
                _error(frame, -32700)
                assert frame["id"] is None
            # JSON, but not a request
            for line in ("[]", "[1, 2]", "42", '"text"', '{"id": 3}', '{"jsonrpc":"1.0","id":4,"method":"initialize"}',
                         '{"jsonrpc":"2.0","id":5,"method":7}', '{"jsonrpc":"2.0","id":{"a":1},"method":"initialize"}'):
                await raw.send(line)
                _error(await raw.reply(), -32600)
            # a notification is never answered, even an unknown one; the next request is
            await raw.send('{"jsonrpc":"2.0","method":"no/such/notification","params":{}}')
            await raw.send('{"jsonrpc":"2.0","id":6,"method":"initialize","params":"not an object"}')
            _error(await raw.reply(6), -32602)
            await raw.send('{"jsonrpc":"2.0","id":7,"method":"session/load","params":{"cwd":5,"sessionId":[]}}')
            _error(await raw.reply(7), -32602)
            await raw.send('{"jsonrpc":"2.0","id":8,"method":"initialize","params":{"protocolVersion":1}}')
            init = await raw.reply(8)
            assert init["result"]["protocolVersion"] == 1 and init["result"]["agentCapabilities"]["loadSession"]
            await raw.send('{"jsonrpc":"2.0","id":9,"method":"no/such/method","params":{}}')
            _error(await raw.reply(9), -32601)
            await raw.send('{"jsonrpc":"2.0","id":10,"method":"session/prompt","params":{"sessionId":1}}')
            _error(await raw.reply(10), -32602)
            await raw.send('{"jsonrpc":"2.0","id":11,"method":"session/prompt","params":'
                           '{"sessionId":"nope","prompt":[{"type":"text","text":"hi"}]}}')
            _error(await raw.reply(11), -32002)
            await raw.send('{"jsonrpc":"2.0","id":12,"method":"session/new","params":{"cwd":"%s","mcpServers":[]}}' % ws)
            sid = (await raw.reply(12))["result"]["sessionId"]
            await raw.send('{"jsonrpc":"2.0","id":13,"method":"session/prompt","params":'
                           '{"sessionId":"%s","prompt":[{"type":"nope"}]}}' % sid)
            _error(await raw.reply(13), -32602)
            await raw.send('{"jsonrpc":"2.0","id":14,"method":"session/prompt","params":'
                           '{"sessionId":"%s","prompt":[]}}' % sid)
            _error(await raw.reply(14), -32602)  # nothing to say
        finally:
            if proc.stdin is not None:
                proc.stdin.close()
            await asyncio.wait_for(proc.wait(), 20)
    assert proc.returncode == 0
    assert "Traceback" not in stderr.read_text()
