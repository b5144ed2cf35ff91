"""Issue 33: the task's tests are read-only by effect, in every mode: whatever changes one is put back.

A shell command can change a file by any spelling (`sed -i`, `echo >`, `mv`, `rm`, `cp`, `python
-c "open(...)"`, `git show … >`, a link, a chmod): the guard is what happened to the file, not
the command's words. End to end through `duckflow run` (boxed, auto-approved) and through a
person's approval of a plain command: the test is as it was after the action, the model is told
in its next prompt, the person reads one line, and no check counts a run against a changed test.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from duckflow.companion.decision import MainDecision
from duckflow.llm.types import ToolCall
from duckflow.workspace.sandbox import bwrap_usable
from tests.companion.test_expectation import ANAGRAM, ANAGRAM_TEST, EXERCISE, SOLVED
from tests.companion.test_honest_ending import create, run, step
from tests.helpers.companion import env  # noqa: F401

D = MainDecision(rationale="x", goal_consistency="yes", constraint_check="yes", next_step="continue",
                 step="EXECUTION", prompt_pattern="base_main_specialized")
SPELLINGS = [
    "sed -i 's/inlets/listen/' anagram_test.py",
    "echo 'import unittest' > anagram_test.py",
    "cat anagram.py > anagram_test.py",
    "mv anagram_test.py old_test.txt",
    "rm anagram_test.py",
    "cp anagram.py anagram_test.py",
    "python3 -c \"open('anagram_test.py', 'w').write('')\"",
    "chmod 000 anagram_test.py",
    "rm anagram_test.py && mkdir anagram_test.py",
    "ln -sf anagram.py anagram_test.py",
    "git show HEAD:anagram_test.py > anagram_test.py",  # (the box keeps .git/ read-only: no checkout)
]


def _exercise(root: Path) -> None:
    (root / "anagram.py").write_text(ANAGRAM)
    (root / "anagram_test.py").write_text(ANAGRAM_TEST)


@pytest.mark.skipif(not bwrap_usable(), reason="bubblewrap cannot run here")
@pytest.mark.parametrize("as_json", [True, False])
def test_a_boxed_auto_approved_script_that_rewrites_the_test_is_not_kept(
        front_door: Any, scripted: Any, as_json: bool) -> None:
    # the bundled model wrote anagram_test.py under auto-approve; a script it wrote can too
    _exercise(front_door.root)
    tidy = "with open('anagram_test.py', 'w') as f:\n    f.write('import unittest\\n')\n"
    model = scripted([step("make the tests pass", create("tidy.py", tidy), run("python3 tidy.py"), done=False),
                      step("solve it", create("anagram.py", SOLVED))])
    rc, out, said = front_door.run(EXERCISE, as_json=as_json)
    assert (front_door.root / "anagram_test.py").read_text() == ANAGRAM_TEST
    assert "NOT KEPT: this changed anagram_test.py, the task's tests; that change was not kept" in str(
        model.requests[1].messages[-1].content)
    assert "not yours to change, by any command. Change anagram.py" in str(model.requests[1].messages[-1].content)
    assert rc == 0
    if as_json:
        assert out["result"]["kind"] == "done" and "the tests in anagram_test.py pass" in out["result"]["expected"]
    else:  # the person reads it in one line, then the ending
        said = " ".join(said.split())  # (the terminal wraps at its width)
        assert "Not kept: a command changed anagram_test.py, the task's tests, which the model may not change." in said
        assert "Done — checked: " in said and "as the task expects: the tests in anagram_test.py pass" in said


@pytest.mark.parametrize("command", SPELLINGS)
async def test_a_command_a_person_approved_that_changes_the_test_is_put_back(env: Any, command: str) -> None:  # noqa: F811
    if command.startswith("git") and shutil.which("git") is None:
        pytest.skip("git is not installed")
    _exercise(env.root)
    if command.startswith("git"):  # the repository holds an older test: git brings it back
        (env.root / "anagram_test.py").write_text("import unittest\n")
        for argv in (["init", "-q"], ["add", "anagram_test.py"],
                     ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "old"]):
            subprocess.run(["git", *argv], cwd=env.root, check=True)
        (env.root / "anagram_test.py").write_text(ANAGRAM_TEST)
    (env.root / "anagram_test.py").chmod(0o644)
    o = env.open([], mode="two-call")
    o.session.owner.change("task", lambda s: setattr(s, "task", EXERCISE))
    said: list[str] = []
    o.session.chunks.subscribe(lambda c: said.append(c.data.message) if c.type == "notice" else None)
    first = await o.session._run_calls([ToolCall("execute_shell", {"command": command})], D)
    assert first[0].status == "pending"  # a person decides; they are shown the command, not told its effect
    done = await o.session.answer_approval(True)
    test = env.root / "anagram_test.py"
    assert not test.is_symlink() and test.read_text() == ANAGRAM_TEST and test.stat().st_mode & 0o777 == 0o644
    assert [x.status for x in done.outcomes] == ["refused"] and done.outcomes[0].restored == ("anagram_test.py",)
    assert "Put back anagram_test.py as it was: a command changed the task's tests, which the model may not change." in said
    evidence = o.session.state.evidence[-1]  # what the model reads next, in either mode
    assert "NOT KEPT: this changed anagram_test.py, the task's tests; it was put back as it was" in evidence


async def test_a_check_run_against_a_changed_test_is_no_evidence(env: Any) -> None:  # noqa: F811
    from duckflow.companion import checks

    _exercise(env.root)
    (env.root / "anagram.py").write_text(SOLVED)
    o = env.open([], mode="two-call")
    o.session.owner.change("task", lambda s: setattr(s, "task", EXERCISE))
    gutted = "sed -i 's/self.assertEqual.*/pass/' anagram_test.py && python3 -m pytest -q anagram_test.py"
    await o.session._run_calls([ToolCall("execute_shell", {"command": gutted})], D)
    done = await o.session.answer_approval(True)
    log = checks.log_of(o.session)
    assert done.outcomes[0].status == "refused" and (env.root / "anagram_test.py").read_text() == ANAGRAM_TEST
    assert log.passed is not True and log.met == "" and log.last.startswith("not kept: it changed anagram_test.py")


async def test_a_task_that_asks_for_the_tests_to_change_may_change_them(env: Any) -> None:  # noqa: F811
    _exercise(env.root)
    o = env.open([], mode="two-call")
    o.session.owner.change("task", lambda s: setattr(s, "task", "Add a test for a single word in anagram_test.py"))
    await o.session._run_calls([ToolCall("execute_shell", {"command": "echo '# more' >> anagram_test.py"})], D)
    done = await o.session.answer_approval(True)
    assert done.outcomes[0].status == "ok" and (env.root / "anagram_test.py").read_text().endswith("# more\n")


async def test_a_test_made_during_the_task_is_the_model_s_own(env: Any) -> None:  # noqa: F811
    # only the tests there when the task's first action came are its expectation
    from duckflow.companion import checks

    (env.root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (env.root / "test_calc.py").write_text("import calc\n")
    o = env.open([], mode="two-call")
    o.session.owner.change("task", lambda s: setattr(s, "task", "Fix add in calc.py"))
    assert checks.protected_paths(o.session) == {"test_calc.py"}
    (env.root / "calc_test.py").write_text("import calc\n")  # a command made it during the task
    assert checks.protected_paths(o.session) == {"test_calc.py"}


async def test_a_test_that_cannot_be_put_back_is_said_so(env: Any, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    # (a folder the command made read-only, for a user who is not root): the person's line is
    # true of the effect, never "Put back"
    def refuse(root: Path, rel: str, kept: Any) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("duckflow.companion.testguard._put_back", refuse)
    _exercise(env.root)
    o = env.open([], mode="two-call")
    o.session.owner.change("task", lambda s: setattr(s, "task", EXERCISE))
    said: list[str] = []
    o.session.chunks.subscribe(lambda c: said.append(c.data.message) if c.type == "notice" else None)
    await o.session._run_calls([ToolCall("execute_shell", {"command": "rm anagram_test.py"})], D)
    done = await o.session.answer_approval(True)
    assert done.outcomes[0].status == "refused" and not (env.root / "anagram_test.py").exists()
    assert ("Could not put back anagram_test.py (Permission denied): a command changed the task's tests, which the "
            "model may not change. Put them back by hand.") in said
    assert not any(s.startswith("Put back") for s in said)
    assert "it could not all be put back" in o.session.state.evidence[-1]
