"""docs/ecosystem.md's MCP sections, as written: the shell lines run through `duckflow`, the config
block is read by load_config and its server started, the Python block runs."""

from __future__ import annotations

import ast
import asyncio
import json
import os
import re
import shlex
import sys
import textwrap
from pathlib import Path

import pytest

from duckflow.channels.cli.main import main as cli
from tests.mcp.servers import need

pytest.importorskip("mcp")
DOC = Path(__file__).resolve().parents[2] / "docs" / "ecosystem.md"


def _section(title: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 3)
    return text[start:end if end != -1 else None]


def _blocks(lang: str, title: str = "Tools from MCP servers") -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", _section(title), flags=re.S | re.M)


@pytest.fixture
def on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    need("mcp-server-time")
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")


def test_the_shell_lines_run_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("tomlkit")
    monkeypatch.setenv("DUCKFLOW_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.chdir(tmp_path)
    install, manage, repo = _blocks("sh")
    assert install.strip() == "pip install 'duckflow-agent[mcp]'"
    for line in manage.strip().splitlines():
        words = shlex.split(line)
        assert words[0] == "duckflow" and cli(words[1:]) == 0, line
    from duckflow.config import load_config

    assert list(load_config().mcp_servers) == ["time"]  # docs added then removed
    cloned = tmp_path / "src" / "cloned"
    cloned.mkdir(parents=True)
    (cloned / ".mcp.json").write_text(json.dumps({"mcpServers": {"github": {"command": "github-mcp"}}}))
    monkeypatch.setenv("HOME", str(tmp_path))
    capsys.readouterr()
    for line in repo.strip().splitlines():
        words = shlex.split(line.split("#")[0])
        if words[0] == "cd":
            monkeypatch.chdir(os.path.expanduser(words[1]))
            continue
        assert cli(words[1:]) == 0, line
    out = capsys.readouterr().out
    assert "github" in out and "not started; to allow it: duckflow mcp allow github" in out
    assert "Allowed 'github' from .mcp.json" in out


def test_the_config_block_is_read_and_its_server_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         on_path: None) -> None:
    (block,) = _blocks("toml")
    config = tmp_path / "config.toml"
    config.write_text(block, encoding="utf-8")
    monkeypatch.setenv("DUCKFLOW_CONFIG", str(config))
    from duckflow import McpHub
    from duckflow.config import load_config

    servers = load_config().mcp_servers
    assert servers["docs"].headers == {"Authorization": "Bearer TOKEN"} and servers["docs"].enabled_tools == ["search_docs"]
    hub = McpHub({"time": servers["time"]})
    try:
        tools = {t.name: t for t in hub.tools()}
        assert tools["mcp__time__convert_time"].kind == "read" and tools["mcp__time__get_current_time"].kind == "read"
    finally:
        hub.close()


def test_the_python_block_runs(on_path: None, capsys: pytest.CaptureFixture[str]) -> None:
    (block,) = _blocks("python")
    code = compile(textwrap.dedent(block), "ecosystem.md#mcp", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    maybe = eval(code, {"__name__": "__docs__"})  # noqa: S307 - our own documentation, run as a test
    if asyncio.iscoroutine(maybe):
        asyncio.run(maybe)
