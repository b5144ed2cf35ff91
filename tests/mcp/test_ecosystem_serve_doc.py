"""docs/ecosystem.md's "Duckflow as an MCP server" blocks, as written: each client config is read the
way its client reads it and its command launched (your folder put in for `/path/to/project`), and
the SDK's client lists the tools and reads a file through it; the URL block is served by
`duckflow mcp serve --http` and read by Duckflow's own config."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")
DOC = Path(__file__).resolve().parents[2] / "docs" / "ecosystem.md"
SRC = str(Path(__file__).resolve().parents[2] / "src")


def _blocks(lang: str) -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("## Duckflow as an MCP server")
    section = text[start:text.find("\n## ", start + 3)]
    return re.findall(rf"^```{lang}\n(.*?)^```", section, flags=re.S | re.M)


def _env() -> dict[str, str]:
    return {"PYTHONPATH": SRC, "DUCKFLOW_HOME": os.environ["DUCKFLOW_HOME"], "DUCKFLOW_CONFIG": os.devnull,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


async def _reads_through(command: str, args: list[str], cwd: Path) -> None:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=command, args=args, env=_env(), cwd=str(cwd))
    async with Client(params, read_timeout_seconds=60) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"read_file", "write_file", "execute_shell", "duckflow_task"} <= names
        read = await client.call_tool("read_file", {"path": "README.md"})
        assert not read.is_error and "my project" in str(read.content[0].text)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    if not (Path(sys.executable).parent / "duckflow").exists():
        pytest.skip("the `duckflow` command is not installed beside this Python (pip install -e .)")
    root = tmp_path / "project"
    root.mkdir()
    (root / "README.md").write_text("# my project\n", encoding="utf-8")
    return root


async def test_claude_codes_mcp_json_as_written(project: Path) -> None:
    (block,) = _blocks("json")
    server = json.loads(block)["mcpServers"]["duckflow"]
    await _reads_through(server["command"], server["args"], cwd=project)  # started in the project's folder


async def test_codexs_config_toml_as_written(project: Path) -> None:
    stdio, _ = _blocks("toml")
    server = tomllib.loads(stdio)["mcp_servers"]["duckflow"]
    args = [str(project) if a == "/path/to/project" else a for a in server["args"]]
    await _reads_through(server["command"], args, cwd=project.parent)
    from duckflow.mcp_config import McpServerConfig

    assert McpServerConfig.model_validate(server).tool_timeout_sec == 600  # Duckflow reads the same table


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_the_url_block_reaches_duckflow_mcp_serve_http(project: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    _, url_block = _blocks("toml")
    doc_port = re.search(r"--http (\d+)", DOC.read_text(encoding="utf-8"))
    assert doc_port and f"127.0.0.1:{doc_port[1]}/mcp" in url_block
    port = _free_port()  # the documented port may be taken on this machine: the same block on a free one
    config = tmp_path / "config.toml"
    config.write_text(url_block.replace(doc_port[1], str(port)), encoding="utf-8")
    monkeypatch.setenv("DUCKFLOW_CONFIG", str(config))
    proc = subprocess.Popen(["duckflow", "mcp", "serve", "-w", ".", "--http", str(port)], cwd=project,
                            env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.2)
        from duckflow import McpHub
        from duckflow.config import load_config

        hub = McpHub(load_config().mcp_servers)
        try:
            tools: dict[str, Any] = {t.name: t for t in await hub.start()}
            assert hub.problems == []
            assert "my project" in await tools["mcp__duckflow__read_file"].invoke({"path": "README.md"})
            assert tools["mcp__duckflow__read_file"].kind == "read" and tools["mcp__duckflow__write_file"].kind == "other"
        finally:
            hub.close()
    finally:
        proc.terminate()
        proc.wait(timeout=20)
