"""What start-up may and may not import (issue 12): laziness that must not break, or silently go."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def _py(code: str, *args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DUCKFLOW_HOME": str(home), "DUCKFLOW_CONFIG": str(home / "none.toml"),
           "DUCKFLOW_DEMO_DELAY": "0"}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env,
                          timeout=120)


def test_the_command_line_module_imports_no_command(tmp_path: Path) -> None:
    code = ("import sys, json\nimport duckflow.channels.cli.main\n"
            "print(json.dumps([m for m in ('duckflow.orchestra', 'duckflow.companion', 'pydantic.main', 'jinja2',"
            " 'rich.console', 'duckflow.security.sanitizer') if m in sys.modules]))")
    out = _py(code, home=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == []


def test_a_demo_run_leaves_the_lazy_parts_unloaded_and_still_routes_and_masks(tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    code = ("import sys, json\nfrom duckflow.channels.cli.main import main\n"
            "rc = main(sys.argv[1:])\n"
            "from duckflow.orchestra.router import _builtin_rules\n"
            "tried = sum(p.is_compiled for r in _builtin_rules().rules for p in r._compiled)\n"
            "print(json.dumps({'rc': rc, 'tried': tried, 'loaded': [m for m in ('pathspec', 'regex', "
            "'duckflow.llm.payloads', 'detect_secrets', 'requests') if m in sys.modules]}))")
    out = _py(code, "run", "Create hello.py", "--model", "scripted:demo", "-w", str(work),
              "--auto-approve-workspace", "--json", home=tmp_path)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["rc"] == 0 and result["loaded"] == []
    assert result["tried"] > 0  # the router did run its rules (compiled as they were tried)
    assert (work / "hello.py").exists()
    events = (tmp_path / "events" / "events.jsonl").read_text(encoding="utf-8")
    assert "router.decision" in events  # the orchestra's event log, masked and written


def test_pathspec_is_loaded_where_a_gitignore_exists(tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    (work / ".gitignore").write_text("secret.txt\n", encoding="utf-8")
    (work / "secret.txt").write_text("x", encoding="utf-8")
    (work / "kept.txt").write_text("y", encoding="utf-8")
    code = ("import sys, json\nfrom duckflow.workspace.files import Workspace\n"
            f"ws = Workspace.open({str(work)!r})\n"
            "listing = ws.list_files('.', None, True)\n"
            "print(json.dumps({'pathspec': 'pathspec' in sys.modules, 'listing': json.dumps(listing, default=str)}))")
    out = _py(code, home=tmp_path)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["pathspec"] is True
    assert "kept.txt" in result["listing"] and "secret.txt" not in result["listing"]
