"""A config written with the design notes' own key names is read (aliases), and `config show` says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

SEED_CONFIG = """
[approval]
required_by_default = false
hard_require_approval = ["delete", "rename", "send_sensitive", "push_public", "cost_over_limit", "chmod"]

[approval.auto_approve]
enabled = false
ttl_minutes = 15

[approval.auto_approve.scope]
allowed_task_types = ["design"]
allowed_paths_prefix = ["notes/"]
deny_operations = ["delete"]

[providers]
ollama_restart_command = "systemctl --user restart ollama"
"""


def _duckflow(tmp_path: Path, config: str, *argv: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "config.toml"
    path.write_text(config, encoding="utf-8")
    env = {**os.environ, "DUCKFLOW_CONFIG": str(path), "DUCKFLOW_HOME": str(tmp_path / "home"),
           "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-m", "duckflow", *argv], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120, check=False)  # fmt: skip


def test_config_show_reads_the_seed_names_and_names_their_source(tmp_path: Path) -> None:
    proc = _duckflow(tmp_path, SEED_CONFIG, "config", "show", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    path = tmp_path / "config.toml"
    want = {
        "gate.require_approval": (False, "approval.required_by_default"),
        "gate.auto_approve.enabled": (False, "approval.auto_approve.enabled"),
        "gate.auto_approve.ttl_min": (15, "approval.auto_approve.ttl_minutes"),
        "gate.auto_approve.task_types": (["design"], "approval.auto_approve.scope.allowed_task_types"),
        "gate.auto_approve.paths": (["notes/"], "approval.auto_approve.scope.allowed_paths_prefix"),
        "gate.auto_approve.deny_operations": (["delete"], "approval.auto_approve.scope.deny_operations"),
        "models.ollama.restart_command": ("systemctl --user restart ollama", "providers.ollama_restart_command"),
    }
    for key, (value, seed) in want.items():
        assert rows[key] == {"value": value, "source": f"file {path} as {seed}"}, key
    assert "chmod" in rows["gate.hard_required"]["value"]
    assert rows["gate.hard_required"]["source"] == f"file {path} as approval.hard_require_approval"
    assert "approval.required_by_default (the seed's name) is read as gate.require_approval" in rows["_deprecations"]["value"]
    text = _duckflow(tmp_path, SEED_CONFIG, "config", "show").stdout
    assert "gate.require_approval" in text and "as approval.required_by_default]" in text


def test_todays_key_wins_and_an_unknown_seed_key_is_a_clear_error(tmp_path: Path) -> None:
    both = "[gate]\nrequire_approval = true\n[approval]\nrequired_by_default = false\n"
    rows = json.loads(_duckflow(tmp_path, both, "config", "show", "--json").stdout)
    assert rows["gate.require_approval"]["value"] is True
    bad = _duckflow(tmp_path, "[approval]\nrequired_by_defalt = false\n", "config", "show")
    assert bad.returncode != 0 and "approval.required_by_defalt" in bad.stderr and "Traceback" not in bad.stderr


def test_enabled_switches_the_configured_scope_on_and_off_wins(tmp_path: Path) -> None:
    on = SEED_CONFIG.replace("enabled = false", "enabled = true")
    first = _duckflow(tmp_path, on, "autoapprove", "status", "--json")
    assert first.stderr == ""  # an alias is accepted quietly
    status = json.loads(first.stdout)
    assert status["enabled"] is True and status["created_by"] == "config" and status["minutes_left"] == 15.0
    assert status["scope"]["paths"] == ["notes/"] and status["scope"]["task_types"] == ["design"]
    off = _duckflow(tmp_path, on, "autoapprove", "off")
    assert off.returncode == 0, off.stderr
    after = json.loads(_duckflow(tmp_path, on, "autoapprove", "status", "--json").stdout)
    assert after["enabled"] is False and after["last"]["disabled_by"].startswith("cli:")
