"""The public API as a developer meets it: `from duckflow import ...`, typed, and the docs' code runs."""

from __future__ import annotations

import ast
import asyncio
import importlib
import os
import re
import subprocess
import sys
import textwrap
import tomllib
import types
from pathlib import Path

import pytest

import duckflow

ROOT = Path(__file__).resolve().parents[1]
SRC = Path(duckflow.__file__).resolve().parents[1]
LAZY_PACKAGES = ["duckflow", "duckflow.core", "duckflow.llm", "duckflow.workspace", "duckflow.security"]


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_lazy_name_resolves_and_type_checkers_see_the_same_names(package: str) -> None:
    module = importlib.import_module(package)
    tree = ast.parse(Path(module.__file__ or "").read_text(encoding="utf-8"))
    checked: dict[str, str] = {}
    table: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.module
                for alias in imp.names:
                    assert alias.asname == alias.name, f"{package}: write `{alias.name} as {alias.name}`"
                    checked[alias.name] = imp.module
    table = {k: v for k, v in module._EXPORTS.items()}
    assert checked == table, f"{package}: the TYPE_CHECKING imports and _EXPORTS disagree"
    for name, origin in table.items():
        value = getattr(module, name)
        assert not isinstance(value, types.ModuleType), f"{package}.{name} is a module"
        assert value is getattr(importlib.import_module(origin), name)
    assert set(table) <= set(module.__all__)


def test_core_tool_and_handoff_are_the_functions_not_submodules() -> None:
    from duckflow.core import handoff, tool
    from duckflow.core.handoffs import handoff as real_handoff
    from duckflow.core.tools import tool as real_tool

    assert tool is real_tool and handoff is real_handoff


def test_importing_duckflow_imports_nothing_heavy() -> None:
    code = "import sys, duckflow; print(sorted(m for m in ('pydantic', 'httpx', 'tiktoken') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(SRC)}, check=True)
    assert out.stdout.strip() == "[]"


def test_the_public_import_defines_no_pydantic_model_until_an_agent_runs() -> None:
    # pydantic.main (the first BaseModel class) and importlib.metadata are what once made
    # `from duckflow import Agent, tool` cost 2x `import asyncio, pydantic` (issue 12); a tool
    # and an agent run still work, importing them on first use
    heavy = "('pydantic.main', 'duckflow.core.chunks', 'duckflow.llm.types', 'importlib.metadata')"
    code = ("import sys\nfrom duckflow import Agent, tool\n"
            f"print(sorted(m for m in {heavy} if m in sys.modules))\n"
            "from duckflow import ScriptedModel, reply\n"
            "@tool\ndef add(a: int, b: int) -> int:\n    return a + b\n"
            "r = Agent('a', model=ScriptedModel([reply('hi')]), tools=[add]).run_sync('x')\n"
            "print(r.text, add.spec.parameters['required'], type(r.chunks[-1]).__name__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(SRC)}, check=True)
    assert out.stdout.splitlines() == ["[]", "hi ['a', 'b'] DoneChunk"]


def test_py_typed_ships_in_the_package_the_wheel_is_built_from() -> None:
    assert (SRC / "duckflow" / "py.typed").is_file()
    wheel = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["packages"] == ["src/duckflow"] and "py.typed" not in str(wheel.get("exclude", ""))


USER_SCRIPT = '''\
from duckflow import Agent, ScriptedModel, reply, tool


@tool
def double(n: int) -> int:
    """Double a number."""
    return 2 * n


result = Agent("calc", "Double.", model=ScriptedModel([reply("4")]), tools=[double]).run_sync("2?")
reveal_type(Agent)
reveal_type(tool)
reveal_type(ScriptedModel)
reveal_type(double)
reveal_type(result)
reveal_type(result.error)
'''


def test_mypy_strict_sees_real_types_for_the_public_names(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    script = tmp_path / "user.py"
    script.write_text(USER_SCRIPT)
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-error-summary",
         "--cache-dir", str(tmp_path / "cache"), str(script)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env={**os.environ, "MYPYPATH": str(SRC)})
    revealed = re.findall(r'Revealed type is "(.*)"', proc.stdout)
    errors = [line for line in proc.stdout.splitlines() if ": error:" in line]
    assert not errors and len(revealed) == 6, proc.stdout + proc.stderr
    agent, tool, scripted, double, result, error = revealed
    assert agent.endswith("-> duckflow.core.agent.Agent") and agent != "Any"
    assert "-> duckflow.core.tools.Tool" in tool and tool != "Any"
    assert scripted.endswith("-> duckflow.llm.scripted.ScriptedModel")
    assert (double, result, error) == ("duckflow.core.tools.Tool", "duckflow.core.results.RunResult",
                                       "duckflow.errors.DuckflowError | None")


def _python_blocks(path: Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", path.read_text(encoding="utf-8"), flags=re.S | re.M)


DOC_BLOCKS = [(f"{name}#{i}", block) for name in ("README.md", "docs/engine.md")
              for i, block in enumerate(_python_blocks(ROOT / name), 1)]


@pytest.mark.parametrize(("where", "block"), DOC_BLOCKS, ids=[w for w, _ in DOC_BLOCKS])
def test_the_docs_code_blocks_run(where: str, block: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = compile(textwrap.dedent(block), where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    namespace: dict[str, object] = {"__name__": "__docs__"}
    maybe = eval(code, namespace)  # noqa: S307 - our own documentation, run as a test
    if asyncio.iscoroutine(maybe):
        asyncio.run(maybe)
    out, err = capsys.readouterr()
    assert err == ""
    if where == "README.md#1":
        assert out == "2 + 3 = 5\n"


def test_the_first_docs_example_is_the_typed_public_import() -> None:
    for name in ("README.md", "docs/engine.md"):
        assert _python_blocks(ROOT / name)[0].startswith("from duckflow import Agent")
