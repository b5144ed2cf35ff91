"""What start-up may and may not import (issue 12): laziness that must not break, or silently go."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def _py(code: str, *args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DUCKFLOW_HOME": str(home), "DUCKFLOW_CONFIG": os.devnull,
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
            "from duckflow.llm.tokens import _CJK\n"
            "import tokenize\n"
            "print(json.dumps({'rc': rc, 'tried': tried, 'cjk': _CJK.is_compiled, "
            "'text_signatures': tokenize._compile.cache_info().currsize, 'loaded': [m for m in ('pathspec', 'regex', "
            "'duckflow.llm.payloads', 'detect_secrets', 'requests', 'duckflow.orchestra.coder', "
            # a two-call run (the scripted model) loads none of the single-call turn's machinery
            "'duckflow.companion.singlecall', 'duckflow.protocols.grammar') if m in sys.modules]}))")
    out = _py(code, "run", "Create hello.py", "--model", "scripted:demo", "-w", str(work),
              "--auto-approve-workspace", "--json", home=tmp_path)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["rc"] == 0 and result["loaded"] == []
    assert result["cjk"] is False  # ASCII text is estimated without the CJK pattern
    # no pydantic default factory is a builtin whose signature is parsed from text (tokenize)
    assert result["text_signatures"] == 0
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


def _spy_plugin(site: Path, marker: Path) -> None:
    """An installed distribution whose `pydantic` entry point records that it was loaded."""
    info = site / "spyplug-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: spyplug\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[pydantic]\nspy = spyplug:plugin\n", encoding="utf-8")
    (site / "spyplug.py").write_text(
        f"open({str(marker)!r}, 'a').write('loaded\\n')\n"
        "class _Plugin:\n"
        "    def new_schema_validator(self, *args, **kwargs):\n"
        "        return None, None, None\n"
        "plugin = _Plugin()\n", encoding="utf-8")


def test_a_demo_run_loads_no_pydantic_plugin_unless_the_user_asks(tmp_path: Path) -> None:
    site, marker = tmp_path / "site", tmp_path / "plugin-loaded"
    _spy_plugin(site, marker)
    code = ("import os, sys\nsys.path.insert(0, os.environ['SPY_SITE'])\n"
            "from duckflow.channels.cli.main import main\nsys.exit(main(sys.argv[1:]))")
    for label, user_value in (("default", None), ("user", "some_other_plugin")):
        work = tmp_path / f"w-{label}"
        work.mkdir()
        env = {**os.environ, "SPY_SITE": str(site), "DUCKFLOW_HOME": str(tmp_path / f"h-{label}"),
               "DUCKFLOW_CONFIG": os.devnull, "DUCKFLOW_DEMO_DELAY": "0"}
        env.pop("PYDANTIC_DISABLE_PLUGINS", None)
        if user_value is not None:
            env["PYDANTIC_DISABLE_PLUGINS"] = user_value
        out = subprocess.run([sys.executable, "-c", code, "run", "Create hello.py", "--model", "scripted:demo",
                              "-w", str(work), "--auto-approve-workspace"], capture_output=True, text=True,
                             env=env, timeout=120)
        assert out.returncode == 0, out.stderr
        assert (work / "hello.py").exists()
        if user_value is None:  # no entry point of another package runs inside the command
            assert not marker.exists()
        else:  # the user's own setting is kept: their plugins load
            assert marker.read_text(encoding="utf-8") == "loaded\n"


def test_a_mistyped_command_still_gets_a_suggestion(tmp_path: Path) -> None:
    out = _py("import sys\nfrom duckflow.channels.cli.main import main\nsys.exit(main(sys.argv[1:]))",
              "rnu", home=tmp_path)
    assert out.returncode == 2
    assert "Did you mean `duckflow run`?" in out.stderr


def test_emoji_codes_are_printed_as_written_and_their_table_stays_unloaded(tmp_path: Path) -> None:
    work = tmp_path / "w:smile:x"  # a workspace path that rich would turn into 😄
    work.mkdir()
    code = ("import sys\nfrom duckflow.channels.cli.main import main\nrc = main(sys.argv[1:])\n"
            "print('emoji table loaded' if 'rich._emoji_codes' in sys.modules else 'no emoji table')\n"
            "sys.exit(rc)")
    out = _py(code, "run", "Create hello.py", "--model", "scripted:demo", "-w", str(work),
              "--auto-approve-workspace", home=tmp_path)
    assert out.returncode == 0, out.stderr
    assert f"duckflow run · {work} · scripted:demo" in out.stdout.replace("\n", "")
    assert "\N{SMILING FACE WITH OPEN MOUTH AND SMILING EYES}" not in out.stdout
    assert out.stdout.strip().endswith("no emoji table")


def test_commands_the_agent_runs_do_not_inherit_the_plugin_switch() -> None:
    from duckflow.workspace.sandbox import sandbox_env

    env = sandbox_env({"PYDANTIC_DISABLE_PLUGINS": "__all__", "PATH": "/usr/bin"})
    assert "PYDANTIC_DISABLE_PLUGINS" not in env and env["PATH"] == "/usr/bin"
