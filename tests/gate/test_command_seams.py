"""Commands whose harm the gate's analysis used to miss (issue 8, related cases), through the
real `duckflow run` CLI with workspace auto-approve on: compound shell syntax, newlines,
clustered interpreter flags, and a script the model writes and then runs in the same turn.
The real gate, guard, SQLite stores and shell decide; the workspace must stay untouched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from duckflow.gate.commands import command_hazard
from duckflow.llm.scripted import tool_call
from tests.gate.test_autoapprove_never_destroys import _intact, _last_job, _run, _script, model, ws
from tests.helpers.companion import decision

__all__ = ["model", "ws"]  # fixtures shared with the auto-approve scenarios

SLIPPED = [
    "ls\nrm -f keep.txt",                       # a newline separates commands like `;`
    "if true; then rm -f keep.txt; fi",
    "for f in keep.txt; do rm -f $f; done",
    "{ rm -f keep.txt; }",
    "while false; do :; done; ! rm -f keep.txt",
    "bash -ec 'rm -f keep.txt'",                 # clustered flags hiding -c / -e
    "bash -c -- 'rm -f keep.txt'",
    "python3 -Sc 'import os; os.remove(\"keep.txt\")'",
    "perl -le 'unlink \"keep.txt\"'",
    "perl -E 'unlink \"keep.txt\"'",
    "node -pe 'require(\"fs\").unlinkSync(\"keep.txt\")'",
    "awk 'BEGIN { system(\"rm -f keep.txt\") }'",
]


def _waits_for_a_person(ws: Path, model: Any, capsys: pytest.CaptureFixture[str], home: Path,
                        command: str) -> None:
    """`command` under `duckflow run --auto-approve-workspace`: a pending job marked destructive,
    the workspace untouched."""
    model["script"] = _script("execute_shell", command=command)
    rc, out = _run(capsys, ws, "--auto-approve-workspace")
    assert rc == 4 and out["ending"] == "approval", out
    assert _intact(ws)
    job = _last_job(home)
    assert job.status == "pending" and "destructive" in job.request.hard_required


@pytest.mark.parametrize("command", SLIPPED)
def test_commands_that_slipped_past_the_analysis_wait_for_a_person(
        ws: Path, model: Any, capsys: pytest.CaptureFixture[str],
        _isolated_duckflow_home: Path, command: str) -> None:
    _waits_for_a_person(ws, model, capsys, _isolated_duckflow_home, command)


def _write_then_run(path: str, content: str, command: str) -> list[Any]:
    return [decision("EXECUTION", "base_main_specialized", rationale="do it"),
            tool_call("write_file", path=path, content=content),
            decision("EXECUTION", "base_main_specialized", rationale="now run it"),
            tool_call("execute_shell", command=command),
            decision("DONE", next_step="done", rationale="done")]


WRITTEN = [
    ("notes.txt", "echo tidy\nrm -rf *\n", "sh notes.txt"),
    ("tidy.py", "import shutil\nshutil.rmtree('src')\nopen('keep.txt', 'w').write('')\n",
     "python3 tidy.py"),
    ("tidy2.py", "from os import remove as r\nr('keep.txt')\n", "python3 -u tidy2.py"),
    ("tools/tidy", "#!/usr/bin/env python3\nimport subprocess\nsubprocess.run(['rm', '-rf', 'src'])\n",
     "python3 tools/tidy"),
    ("tidy.js", "require('fs').rmSync('src', {recursive: true})\n", "node tidy.js"),
    ("tools/run", "#!/bin/sh\nrm -rf ../*\n", "cd tools && ./run"),
    ("Makefile", "all: build\n\nbuild:\n\t@echo building\n\t@$(RM) -r src keep.txt\n", "make"),
    ("package.json", '{"scripts": {"pretest": "rm -rf src", "test": "node -v"}}', "npm test"),
]


@pytest.mark.parametrize(("path", "content", "command"), WRITTEN)
def test_a_script_written_then_run_in_one_turn_is_judged_by_its_text(
        ws: Path, model: Any, capsys: pytest.CaptureFixture[str], _isolated_duckflow_home: Path,
        path: str, content: str, command: str) -> None:
    model["script"] = _write_then_run(path, content, command)
    rc, out = _run(capsys, ws, "--auto-approve-workspace")
    assert (ws / path).read_text() == content  # the write itself was auto-approved
    assert rc == 4 and out["ending"] == "approval", out
    assert _intact(ws)
    job = _last_job(_isolated_duckflow_home)
    assert job.status == "pending" and "destructive" in job.request.hard_required


def test_a_harmless_script_written_then_run_still_runs_under_auto_approve(
        ws: Path, model: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """The companion's own loop (write hello.py, run it) stays auto-approvable."""
    content = "items = [1, 2]\nitems.remove(1)\nprint('a'.replace('a', 'b'), items)\n"
    model["script"] = _write_then_run("hello.py", content, "python3 hello.py")
    rc, out = _run(capsys, ws, "--auto-approve-workspace")
    assert rc == 0, out
    assert _intact(ws)


def test_a_makefile_with_a_clean_target_still_runs_its_tests_under_auto_approve(
        ws: Path, model: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """Only the targets `make` runs are judged: a `clean` recipe elsewhere does not matter.
    (`make test` is the project's test command; a bare `make` builds and, under auto-approve,
    waits for a person: gate/allowlist.py.)"""
    content = "test: out.txt\n\nout.txt:\n\techo built >> out.txt\n\nclean:\n\t$(RM) out.txt\n"
    model["script"] = _write_then_run("Makefile", content, "make test")
    rc, out = _run(capsys, ws, "--auto-approve-workspace")
    assert rc == 0, out
    assert _intact(ws)


@pytest.mark.parametrize("command", ["for f in *.py; do python3 -m py_compile $f; done",
                                     "if [ -f x ]; then echo ok; fi", "node --version",
                                     "python3 -X dev -m pytest -q", "bash -lc 'make test'"])
def test_compound_but_harmless_commands_stay_auto_approvable(command: str) -> None:
    assert command_hazard(command) is None
