"""The orchestra's Coder → approval → Worker path applies only what was approved (issue 8)."""

from __future__ import annotations

from typing import Any

from duckflow.llm.scripted import ScriptedModel, reply

from .test_coder_flow import coder_json, write_app

CREATE = "\n".join(["--- /dev/null", "+++ b/new.py", "@@ -0,0 +1 @@", "+print('from the coder')", ""])


async def test_a_file_changed_after_the_proposal_is_not_patched(make_orch: Any) -> None:
    orch = make_orch({"coder2": ScriptedModel([reply(coder_json())])})
    app = write_app(orch.workspace)
    turn = await orch.handle("/code2 fix add() in app.py")
    assert turn.action == "approval" and turn.job_id
    app.write_text("def add(a, b):\n    return a - b  # edited by the person meanwhile\n")
    text = await orch.answer(turn.job_id, True, approver="tester")
    assert "app.py (file) changed since the approval was asked" in text and "ask for the change again" in text
    assert app.read_text().endswith("# edited by the person meanwhile\n")


async def test_a_create_granted_after_the_person_wrote_the_file_keeps_theirs(make_orch: Any) -> None:
    orch = make_orch({"coder2": ScriptedModel([reply(coder_json(CREATE))])})
    turn = await orch.handle("/code2 add new.py")
    assert turn.action == "approval" and turn.job_id
    (orch.workspace / "new.py").write_text("print('mine')\n")
    text = await orch.answer(turn.job_id, True, approver="tester")
    assert "did not exist when the approval was asked and now exists" in text
    assert (orch.workspace / "new.py").read_text() == "print('mine')\n"


async def test_the_patch_is_judged_by_the_guard_before_the_gate(make_orch: Any) -> None:
    link_patch = "\n".join(["--- a/docs/notes.md", "+++ b/docs/notes.md", "@@ -1 +1 @@", "-x", "+y", ""])
    orch = make_orch({"coder2": ScriptedModel([reply(coder_json(link_patch))])})
    (orch.workspace / ".github").mkdir()
    (orch.workspace / ".github" / "ci.yml").write_text("x\n")
    (orch.workspace / "docs").mkdir()
    (orch.workspace / "docs" / "notes.md").symlink_to("../.github/ci.yml")
    turn = await orch.handle("/code2 edit docs/notes.md")
    assert turn.job_id
    op = orch.gate.get(turn.job_id).request.operation
    assert ".github/ci.yml" in op.targets  # scope and risk see where the write lands
