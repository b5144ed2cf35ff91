"""Plugins declared in the config load at the start of every command; a failing one is named, the rest run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

GOOD = '''from duckflow import tool


@tool
def word_count(text: str) -> int:
    """Count the words of a text."""
    return len(text.split())


def shout(text: str) -> str:
    """The text in capitals."""
    return text.upper()
'''

CONFIG = '''[plugins]
modules = ["good_plugin", "broken_plugin", "good_plugin:shout"]
entry_points = ["not_installed"]
'''


def _duckflow(tmp_path: Path, *argv: str, config: str = CONFIG) -> subprocess.CompletedProcess[str]:
    plugins = tmp_path / "plugins"
    plugins.mkdir(exist_ok=True)
    (plugins / "good_plugin.py").write_text(GOOD, encoding="utf-8")
    (plugins / "broken_plugin.py").write_text("import not_a_module_anywhere\n", encoding="utf-8")
    (tmp_path / "config.toml").write_text(config, encoding="utf-8")
    env = {**os.environ, "DUCKFLOW_CONFIG": str(tmp_path / "config.toml"), "DUCKFLOW_HOME": str(tmp_path / "home"),
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(plugins)])}
    return subprocess.run([sys.executable, "-m", "duckflow", *argv], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120, check=False)  # fmt: skip


def test_plugins_lists_what_each_declared_plugin_gave_or_why_it_failed(tmp_path: Path) -> None:
    proc = _duckflow(tmp_path, "plugins", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = {r["name"]: r for r in json.loads(proc.stdout)["declared"]}
    assert rows["good_plugin"]["tools"] == ["word_count"] and rows["good_plugin"]["error"] is None
    assert rows["good_plugin:shout"]["tools"] == ["shout"]
    assert "No module named 'not_a_module_anywhere'" in rows["broken_plugin"]["error"]
    assert "no installed package provides it" in rows["not_installed"]["error"]
    text = _duckflow(tmp_path, "plugins").stdout
    assert "good_plugin  (module)  tools: word_count" in text and "broken_plugin  (module)  failed:" in text


def test_every_command_loads_them_and_a_failure_is_one_line(tmp_path: Path) -> None:
    proc = _duckflow(tmp_path, "config", "show", "--section", "plugins")
    assert proc.returncode == 0, proc.stderr
    failures = [ln for ln in proc.stderr.splitlines() if ln.startswith("duckflow: plugin ")]
    assert len(failures) == 2 and "Traceback" not in proc.stderr
    assert failures[0].startswith("duckflow: plugin broken_plugin did not load: ModuleNotFoundError")
    assert "plugins.modules" in proc.stdout


def test_a_loaded_plugin_tool_runs_in_the_engine(tmp_path: Path) -> None:
    code = ("import asyncio, json\n"
            "from duckflow.channels.cli.pluginboot import load_at_start\n"
            "from duckflow import Agent\nfrom duckflow.core.registry import ToolRegistry\n"
            "from duckflow.llm.scripted import ScriptedModel, reply, tool_call\n"
            "load_at_start(quiet=True)\nreg = ToolRegistry(plugins=True)\n"
            "model = ScriptedModel([tool_call('word_count', text='one two three'), reply('done')])\n"
            "agent = Agent('a', 'x', model=model, tools=[reg['word_count']])\n"
            "res = asyncio.run(agent.run('count'))\n"
            "print(json.dumps([c.data.content for c in res.chunks if c.type == 'tool_response']))\n")
    (tmp_path / "probe.py").write_text(code, encoding="utf-8")
    proc = _duckflow(tmp_path, "--version")  # writes the plugin files and the config
    env = {**os.environ, "DUCKFLOW_CONFIG": str(tmp_path / "config.toml"), "DUCKFLOW_HOME": str(tmp_path / "home"),
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(tmp_path / "plugins")])}
    proc = subprocess.run([sys.executable, str(tmp_path / "probe.py")], capture_output=True, text=True, env=env,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == ["3"]


def test_a_workspace_cannot_declare_plugins(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".duckflow").mkdir(parents=True)
    (ws / ".duckflow" / "config.toml").write_text('[plugins]\nmodules = ["evil"]\n', encoding="utf-8")
    proc = _duckflow(tmp_path, "config", "show", "-w", str(ws), config="")
    assert proc.returncode != 0 and "plugins may only be set in your own config file" in proc.stderr
