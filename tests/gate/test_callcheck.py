"""A call check (`python3 -c "import m; print(m.f(2))"`) is judged by its module's text, under the real gate."""

from __future__ import annotations

from pathlib import Path

import pytest

from duckflow.gate import AutoApproveScope, Gate, guarded_operation
from duckflow.workspace.guard import WorkspaceGuard

SCOPE = AutoApproveScope.workspace()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "greet.py").write_text("def greet(name):\n    return f'Hello, {name}!'\n")
    (root / "tidy.py").write_text("import shutil\n\n\ndef tidy():\n    shutil.rmtree('src')\n")
    return root


def _auto(ws: Path, tmp_path: Path, command: str, *, plain: bool = False) -> object:
    """Auto-answer `command` as the companion submits it: the allow-list judged with this
    session's context (greet.py and tidy.py written by the session, in a box unless `plain`)."""
    from dataclasses import replace

    from duckflow.gate.allowlist import unlisted

    gate = Gate(tmp_path / "g.db")
    op = guarded_operation("execute_shell", {"command": command}, WorkspaceGuard(ws))
    read = lambda p: (ws / p).read_text() if (ws / p).is_file() else None  # noqa: E731
    op = replace(op, allow=unlisted(op.command, written={"greet.py", "tidy.py"}, plain=plain, read_text=read))
    job = gate.submit(op, intent="check", rationale="check")
    assert job.decision == "pending" and job.job_id
    return gate.auto_answer(job.job_id, SCOPE, by="test")


def test_a_call_of_a_safe_workspace_module_is_auto_approved(ws: Path, tmp_path: Path) -> None:
    answered = _auto(ws, tmp_path, "python3 -c \"import greet; print(greet.greet('Bob'))\"")
    assert not isinstance(answered, str), answered  # a Decision: auto-approved, judged again on the way


def test_a_bare_import_of_a_safe_workspace_module_is_auto_approved(ws: Path, tmp_path: Path) -> None:
    # the check that a module prints nothing on import (companion/quietimport.py) runs only its text
    answered = _auto(ws, tmp_path, 'python3 -c "import greet"')
    assert not isinstance(answered, str), answered


def test_without_a_box_even_a_safe_call_check_waits(ws: Path, tmp_path: Path) -> None:
    answered = _auto(ws, tmp_path, "python3 -c \"import greet; print(greet.greet('Bob'))\"", plain=True)
    assert isinstance(answered, str) and "no box" in answered


@pytest.mark.parametrize("command", [
    "python3 -c \"import tidy; print(tidy.tidy())\"",  # the module's text deletes: judged by it
    "python3 -c \"import tidy\"",  # the bare import too
    "python3 -c \"import shutil\"",  # not a workspace module
    "python3 -c \"import shutil; print(shutil.rmtree('src'))\"",  # not a workspace module
    "python3 -c \"import greet; print(greet.greet(open('x').read()))\"",  # not a literal argument
    "python3 -c \"import greet; print(greet.greet('a')); import os\"",  # more code
    "python3 -c \"import greet; print(greet.greet('a'))\"; rm -rf src",
])
def test_anything_else_inline_still_needs_a_person(ws: Path, tmp_path: Path, command: str) -> None:
    answered = _auto(ws, tmp_path, command)
    assert isinstance(answered, str)  # waits for a person


def test_the_asserted_call_check_is_read_and_a_value_that_is_not_one_is_refused() -> None:
    from duckflow.gate.callcheck import call_check_module

    ok = ["-c", "import text; got = text.word_freq('The the'); assert got == {'the': 2}, got"]
    assert call_check_module(ok) == "text"
    for bad in ("import text; got = text.word_freq('a'); assert got == {[1]: 2}, got",  # unhashable: no value
                "import text; got = text.word_freq(open('x').read()); assert got == 1, got",
                "import text; got = text.f(1); assert got == 1, print('x')",
                "import text; got = text.f(1); assert got != 1, got"):
        assert call_check_module(["-c", bad]) is None, bad
