"""The single-call run verb with arguments, and `python -m`, under workspace auto-approve: a
module the model wrote (`python3 -m tidy`), a script handed to a module runner or to pytest,
and the standard library's / pytest's options that delete, overwrite or serve wait for a person.
Driven through the single-call companion (one Sym-Ops reply, the real gate, tools, SQLite and
shell — bubblewrap where it works) and through `duckflow run`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from duckflow.companion.task import drive
from duckflow.gate import Gate
from duckflow.gate.commands import command_hazard
from duckflow.llm.scripted import reply
from tests.gate.test_autoapprove_never_destroys import _intact, _last_job, _run, model, ws
from tests.gate.test_command_seams import _waits_for_a_person, _write_then_run
from tests.helpers.companion import env  # noqa: F401

__all__ = ["model", "ws"]

TIDY = "import shutil\nshutil.rmtree('src')\n"
TEST_WITH_TMP = "def test_a(tmp_path):\n    (tmp_path / 'x').write_text('1')\n"


def _step(files: dict[str, str], command: str) -> str:
    creates = "".join(f"$ create @ {p}\n---\n{t}---\n" for p, t in files.items())
    action = f"$ test @ {command[5:]}" if command.startswith("test ") else f"$ run @ {command}"
    return f"~ write and run\n#c0.9 #m0.8 #f0.9 #s0.9\n{creates}{action}\n~ next: DONE\n"


SINGLE_CALL = [
    ({"tidy.py": TIDY}, "python3 -m tidy"),
    ({"tools/__init__.py": "", "tools/tidy.py": TIDY}, "python3 -m tools.tidy"),
    ({"tidy.py": TIDY}, "python3 -m cProfile tidy.py"),
    ({"test_a.py": TEST_WITH_TMP, "tidy.py": TIDY}, "python3 -m pytest -q test_a.py tidy.py"),
    ({"tidy.py": TIDY}, "python3 -m unittest tidy"),
    ({"test_a.py": TEST_WITH_TMP}, "python3 -m pytest -q test_a.py --basetemp=src"),
    ({"tidy.py": TIDY}, "test tidy.py"),  # `$ test @ FILE` runs pytest on exactly that file
    ({"test_a.py": TEST_WITH_TMP, "tidy.py": TIDY}, "python3 -m pytest -q test_a.py -p tidy"),
    ({"tidy.py": TIDY}, "python3 -m pytest -q --pyargs tidy"),
    ({"tidy.py": TIDY}, "cd . && pytest -q tidy.py"),  # the pytest program, not `-m pytest`
]


@pytest.mark.parametrize(("files", "command"), SINGLE_CALL)
async def test_a_module_or_run_argument_that_deletes_waits_for_a_person_in_single_call(
        env: Any, files: dict[str, str], command: str) -> None:  # noqa: F811
    (env.root / "src").mkdir()
    (env.root / "src" / "app.py").write_text("print('app')\n")
    o = env.open([reply(_step(files, command))] * 2, codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message("Write tidy helpers and run them"),
                      auto_approve_workspace=True)
    assert (env.root / "src" / "app.py").read_text() == "print('app')\n", command
    ran = [x for r in out.results for x in r.outcomes if x.call.name in ("execute_shell", "run_tests")]
    assert not any(x.status == "ok" for x in ran), [x.content[:300] for x in ran]
    state = o.session.state
    assert state.pending_gate and state.pending_job
    with Gate(env.home / "gate.db") as gate:
        job = gate.get(state.pending_job["job_id"])
    assert job is not None and job.status == "pending" and "destructive" in job.request.hard_required


async def test_a_plain_pytest_run_with_a_word_argument_still_runs_under_auto_approve(
        env: Any) -> None:  # noqa: F811
    o = env.open([reply(_step({"test_a.py": TEST_WITH_TMP}, "python3 -m pytest -q test_a.py"))],
                 codec="symops", mode="single-call")
    out = await drive(o.session, o.session.handle_message("Write test_a.py and run it"),
                      auto_approve_workspace=True)
    ran = [x for r in out.results for x in r.outcomes if x.call.name == "execute_shell"]
    assert out.success and ran and "1 passed" in ran[-1].content, [x.content[:600] for x in ran]


MODULE_COMMANDS = [
    "python3 -m venv --clear src",
    "python3 -m json.tool docs/readme.json keep.txt",
    "python3 -m zipfile -e bundle.zip .",
    "python3 -m tarfile --extract bundle.tar .",
    "python3 -m http.server 8000",
    "python3 -m pip uninstall -y pytest",
    "python3 -m cProfile -o keep.txt src/app.py",
    "pytest -q --junitxml=keep.txt",
    "python3 -m pytest -q -o cache_dir=/tmp/elsewhere",
]


@pytest.mark.parametrize("command", MODULE_COMMANDS)
def test_python_modules_that_delete_overwrite_or_serve_wait_for_a_person(
        ws: Path, model: Any, capsys: pytest.CaptureFixture[str],
        _isolated_duckflow_home: Path, command: str) -> None:
    _waits_for_a_person(ws, model, capsys, _isolated_duckflow_home, command)


@pytest.mark.parametrize("command", ["python3 -m pytest -q", "python3 -m venv .venv",
                                     "python3 -m json.tool --indent 2 a.json", "pip list",
                                     "python3 -m cProfile -s time app.py", "python3 -m py_compile a.py"])
def test_harmless_module_runs_stay_auto_approvable(command: str) -> None:
    assert command_hazard(command) is None


@pytest.mark.parametrize("command", ["python3 -I tidy.py", "python3 -O tidy.py", "python3 -Im tidy",
                                     "python3 -mtidy", "python3 -Wignore -m tidy"])
def test_python_options_cannot_hide_the_script_or_module_it_runs(
        ws: Path, model: Any, capsys: pytest.CaptureFixture[str],
        _isolated_duckflow_home: Path, command: str) -> None:
    # `-I` and `-O` take no value: the gate's option skipping took `tidy.py` for one and
    # never read the script; a clustered `-Im` / attached `-mtidy` hid the module
    model["script"] = _write_then_run("tidy.py", TIDY, command)
    rc, out = _run(capsys, ws, "--auto-approve-workspace")
    assert rc == 4 and out["ending"] == "approval", out
    assert _intact(ws)
    job = _last_job(_isolated_duckflow_home)
    assert job.status == "pending" and "destructive" in job.request.hard_required


@pytest.mark.parametrize(("path", "content", "command"), [
    ("tidy.js", "require('fs').rmSync('src', {recursive: true})\n", "node -r ./tidy.js"),
    ("tidy.js", "require('fs').rmSync('src', {recursive: true})\n", "node --require ./tidy src/app.js"),
    ("tidy.rb", "require 'fileutils'\nFileUtils.rm_rf('src')\n", "ruby -r ./tidy.rb src/app.rb"),
])
def test_a_file_node_or_ruby_preloads_is_judged_by_its_text(
        ws: Path, model: Any, capsys: pytest.CaptureFixture[str], _isolated_duckflow_home: Path,
        path: str, content: str, command: str) -> None:
    # `-r` was taken for inline code and nothing after it was read: the preloaded file runs
    # first (with no script at all for `node -r ./tidy.js`)
    model["script"] = _write_then_run(path, content, command)
    rc, out = _run(capsys, ws, "--auto-approve-workspace")
    assert rc == 4 and out["ending"] == "approval", out
    assert _intact(ws)
    job = _last_job(_isolated_duckflow_home)
    assert job.status == "pending" and "destructive" in job.request.hard_required
