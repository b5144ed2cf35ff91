"""A correction keeps what the person did not object to: "no — call it greet.py instead" proposes the same
content under the new name (no model call), and the re-ask shows the model the rejected proposal and
the person's words; any free answer at the card is understood."""

from __future__ import annotations

from typing import Any

from duckflow.channels.cli.answers import understand
from duckflow.companion.task import drive
from duckflow.llm.scripted import ScriptedModel, reply, tool_call
from tests.helpers.companion import decision, env  # noqa: F401

SCRIPT = 'import sys\n\n\ndef main():\n    print("hello", *sys.argv[1:])\n\n\nmain()\n'
WRITE = ("~ write the script\n#c0.9 #m0.9 #f0.9 #s0.9\n$ create @ hello.py\n---\n" + SCRIPT + "---\n"
         "$ run @ python3 hello.py\n~ next: DONE\n")


async def test_a_rename_correction_keeps_the_content(env: Any) -> None:  # noqa: F811
    o = env.open([reply(WRITE)], codec="symops", mode="single-call")
    s = o.session
    out = await drive(s, s.handle_message("Create a script that greets its arguments"))
    assert out.ending == "approval"
    answered = await s.answer_approval(False, note="call it greet.py instead")
    assert answered.next_step == "continue"  # words given: the task goes on with them
    out = await drive(s, s.continue_task(observed=False))
    assert out.ending == "approval", out.message
    job = s.state.pending_job or {}
    assert job["call"]["arguments"] == {"path": "greet.py", "content": SCRIPT}
    assert "greet.py" in job["request"]["diff_preview"] and 'print("hello", *sys.argv[1:])' in job["request"]["diff_preview"]
    model = s.model
    assert isinstance(model, ScriptedModel) and len(model.requests) == 1  # the loop wrote it: no model call
    assert not (env.root / "hello.py").exists()


async def test_the_re_ask_shows_the_rejected_proposal_and_the_words(env: Any) -> None:  # noqa: F811
    o = env.open([
        decision("EXECUTION", "base_main_specialized", rationale="write the script"),
        tool_call("write_file", path="hello.py", content=SCRIPT),
        decision("EXECUTION", "base_main_specialized", rationale="follow the words"),
        tool_call("write_file", path="hello.py", content=SCRIPT.replace("hello", "hi")),
    ])
    s = o.session
    await s.handle_message("Create hello.py that greets its arguments")
    await s.answer_approval(False, note="say hi instead of hello")
    r = await s.continue_task(observed=False)
    model = s.model
    assert isinstance(model, ScriptedModel)
    asked = model.requests[-1].messages[-1].content
    assert "The person said no to this proposal:\ncreate hello.py:" in asked
    assert 'print("hello", *sys.argv[1:])' in asked and "Their words: say hi instead of hello" in asked
    assert r.pending is not None and "hi" in r.pending["request"]["diff_preview"]


def test_any_free_answer_at_the_card_is_understood() -> None:
    for yes in ("y", "yes", "ok", "OK", "go ahead", "Go ahead!", "sure", "lgtm", "do it"):
        assert understand(yes) == ("yes", ""), yes
    assert understand("n") == ("no", "") and understand("no") == ("no", "")
    assert understand("no — call it greet.py instead") == ("no", "call it greet.py instead")
    assert understand("no, call it greet.py instead") == ("no", "call it greet.py instead")
    assert understand("call it greet.py instead") == ("no", "call it greet.py instead")
    assert understand("nothing like that") == ("no", "nothing like that")  # (not a "no" word)
    assert understand("a") == ("always", "") and understand("d") == ("details", "")
    assert understand("   ") is None and understand("maybe") is None
    assert understand("what does it change?") is None  # a question is not a correction


async def test_no_card_for_a_change_that_changes_nothing(env: Any) -> None:  # noqa: F811
    (env.root / "hello.py").write_text(SCRIPT)
    same_edit = "<<<<<<< SEARCH\nmain()\n=======\nmain()\n>>>>>>> REPLACE\n"
    o = env.open([
        decision("EXECUTION", "base_main_specialized", rationale="write it"),
        tool_call("write_file", path="hello.py", content=SCRIPT),
        decision("EXECUTION", "base_main_specialized", rationale="edit it"),
        tool_call("edit_file", path="hello.py", content=same_edit),
    ])
    s = o.session
    r = await s.handle_message("make hello.py greet its arguments")
    assert r.pending is None and not s.state.pending_gate
    said = [c.data.message for c in r.chunks if c.type == "notice" and c.data.code == "unchanged"]
    assert said == ["hello.py already reads exactly so; nothing was written"]
    assert s.runner.gate.history(5) == []  # nothing was asked
    assert s.state.memory.files_created == [] and s.state.memory.successful_operations == 0
    r = await s.continue_task(observed=True)
    assert r.pending is None and s.runner.gate.history(5) == []
    assert (env.root / "hello.py").read_text() == SCRIPT
