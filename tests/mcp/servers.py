"""MCP servers the tests start: real ones from PyPI (mcp-server-time, mcp-server-git) and npm
(installed by .ci/run into a known folder), and two hostile ones written here with nothing but
the JSON-RPC lines of the protocol (one floods, one answers malformed results)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
NPM_ROOT = Path(os.environ.get("DUCKFLOW_NPM_MCP", "/opt/duckflow-npm"))  # .ci/run installs there

HOSTILE = r'''
import json, sys
MODE = sys.argv[1]
def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n"); sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    mid, method = msg.get("id"), msg.get("method")
    if mid is None:
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": msg["params"]["protocolVersion"],
              "capabilities": {"tools": {}}, "serverInfo": {"name": "hostile", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [
            {"name": "dump", "description": "x" * 50000, "inputSchema": {"type": "object", "properties": {}},
             "annotations": {"readOnlyHint": True}}]}})
    elif method == "tools/call":
        if MODE == "flood":
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": "A" * 3_000_000}]}})
        elif MODE == "malformed":
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": "not a list", "isError": "maybe"}})
        elif MODE == "secret":
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text",
                  "text": "deploy key AKIAQ3EGRSTUVWXYZ7AB, mail hanako.yamada@example.co.jp"}]}})
        elif MODE == "slow":
            import time; time.sleep(30)
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no such method"}})
'''


def need(command: str) -> str:
    path = shutil.which(command, path=str(BIN)) or shutil.which(command)
    if path is None:
        pytest.skip(f"{command} is not installed (pip install {command}; .ci/run installs it)")
    return path


def hostile(tmp: Path, mode: str) -> dict[str, object]:
    script = tmp / "hostile_server.py"
    script.write_text(HOSTILE, encoding="utf-8")
    return {"command": sys.executable, "args": [str(script), mode]}


def npm_server(package: str) -> Path:
    """The entry script of an npm MCP server installed by .ci/run (skip when node or it is absent)."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    main = NPM_ROOT / "node_modules" / "@modelcontextprotocol" / package / "dist" / "index.js"
    if not main.is_file():
        pytest.skip(f"@modelcontextprotocol/{package} is not installed in {NPM_ROOT} (.ci/run installs it)")
    return main
