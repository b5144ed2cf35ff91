"""The Gate's five points are computed from the operation (seed 001 §8.2, M29), shown by the CLI."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console

from duckflow.channels.cli.render import Renderer
from duckflow.companion.fivepoints import alternatives_in
from duckflow.llm.scripted import ScriptedModel, ScriptStep
from duckflow.llm.types import ToolCall
from tests.helpers.companion import decision

EDIT_OK = "<<<<<<< SEARCH\ndef add(a, b):\n    return a + b\n=======\ndef add(a: int, b: int) -> int:\n    return a + b\n>>>>>>> REPLACE\n"
EDIT_BAD = "<<<<<<< SEARCH\ndef add(x, y):\n    return x - y\n=======\ndef add(x, y):\n    return x + y\n>>>>>>> REPLACE\n"


def _rendered(opened: Any) -> io.StringIO:
    buf = io.StringIO()
    opened.session.chunks.subscribe(Renderer(Console(file=buf, width=160, highlight=False)))
    return buf


def _ws(env: Any) -> None:
    (env.root / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (env.root / "tests").mkdir()
    (env.root / "tests" / "test_calc.py").write_text("from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n")
    (env.root / "tests" / "test_other.py").write_text("import os\n")


async def test_impact_and_alternatives_come_from_the_operation_and_the_same_reply(env: Any) -> None:
    _ws(env)
    model = ScriptedModel([
        decision("EXECUTION", "base_main_specialized", rationale="type the function"),
        ScriptStep(text="Typing add().\nAlternatives: add a .pyi stub instead; use a docstring only",
                   calls=[ToolCall("edit_file", {"path": "calc.py", "content": EDIT_OK})]),
    ], name="t")
    o = env.open(model)
    out = _rendered(o)
    chunks = [c async for c in o.session.stream("add type hints to calc.add")]
    req = next(c for c in chunks if c.type == "approval").data.request
    assert req["impact"].startswith("1 file (calc.py); +1 −1 lines; undoable with `duckflow undo`")
    assert "tests affected: tests/test_calc.py" in req["impact"] and "test_other" not in req["impact"]
    assert req["alternatives"] == "add a .pyi stub instead · use a docstring only"
    assert len(model.requests) == 2  # no extra call for the alternatives
    assert "tests affected: tests/test_calc.py" in out.getvalue() and "add a .pyi stub" in out.getvalue()


async def test_a_failing_edit_says_why_and_shows_the_closest_lines(env: Any) -> None:
    _ws(env)
    model = ScriptedModel([
        decision("EXECUTION", "base_main_specialized", rationale="fix add"),
        ScriptStep(text="Fixing.", calls=[ToolCall("edit_file", {"path": "calc.py", "content": EDIT_BAD})]),
    ], name="t")
    o = env.open(model)
    out = _rendered(o)
    chunks = [c async for c in o.session.stream("fix add")]
    req = next(c for c in chunks if c.type == "approval").data.request
    diff = req["diff_preview"]
    assert diff.startswith("THIS EDIT WOULD FAIL: 1 of 1 hunk(s) do not match calc.py")
    assert "closest lines in calc.py (line 1):" in diff and "def add(a, b):" in diff
    assert req["alternatives"].startswith("none offered by the model")
    assert "THIS EDIT WOULD FAIL" in out.getvalue()


async def test_a_command_is_not_undoable(env: Any) -> None:
    model = ScriptedModel([
        decision("EXECUTION", "base_main_specialized", rationale="run it"),
        ScriptStep(text="Alternatives: none", calls=[ToolCall("execute_shell", {"command": "python -V"})]),
    ], name="t")
    o = env.open(model)
    chunks = [c async for c in o.session.stream("show the python version")]
    req = next(c for c in chunks if c.type == "approval").data.request
    assert req["impact"] == "runs `python -V` in the workspace; not undoable (a command's effects are not checkpointed)"


def test_alternatives_are_read_in_both_languages_and_none_means_none() -> None:
    assert alternatives_in("ok\n**Alternatives:** a; b\n") == ["a", "b"]
    assert alternatives_in("代替案: 別ファイルに書く；手で直す") == ["別ファイルに書く", "手で直す"]
    assert alternatives_in("Alternatives: none") == [] and alternatives_in("no line") == []
