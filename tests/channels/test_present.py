"""The presentation layer: which chunk becomes which line a person reads, and what waits for --verbose."""

from __future__ import annotations

import json
from pathlib import Path

from duckflow.channels.actionwords import card, headline
from duckflow.channels.present import Presenter, visible
from duckflow.core.chunks import (
    ApprovalChunk,
    ApprovalData,
    DecisionChunk,
    DecisionData,
    DoneChunk,
    DoneData,
    PlanChunk,
    PlanData,
    ProgressChunk,
    ProgressData,
    StateChunk,
    StateData,
    ToolCallChunk,
    ToolCallData,
    ToolResponseChunk,
    ToolResponseData,
    delta,
    notice,
)

REQUEST = {"intent": "plan plan-20261128-001 step 2: write_file proposed while planning",
           "rationale": "the plan is ready", "impact": "1 file; undoable with `duckflow undo`",
           "alternatives": "none", "risk": "low", "reversible": True,
           "operation": {"tool": "write_file", "paths": ["hello.py"]},
           "diff_preview": "--- /dev/null\n+++ b/hello.py\n@@ -0,0 +1,2 @@\n+a\n+b\n"}


def _person(p: Presenter, chunk: object) -> list[str]:
    return [ln.text for ln in p.feed(chunk) if ln.kind != "status" and visible(ln, "person")]


def test_a_tool_call_and_its_result_are_one_action_line_and_the_json_waits_for_verbose() -> None:
    p = Presenter()
    call = ToolCallChunk(agent="companion", data=ToolCallData(id="1", name="execute_shell",
                                                              arguments={"command": "python3 hello.py"}))
    assert _person(p, call) == []
    out = json.dumps({"command": "python3 hello.py", "ran": True, "exit_code": 0, "stdout": "x\n" * 15, "stderr": ""})
    lines = p.feed(ToolResponseChunk(agent="companion", data=ToolResponseData(id="1", name="execute_shell", content=out)))
    person = [ln.text for ln in lines if ln.kind == "action"]
    assert person == ["Run python3 hello.py → exit 0, 15 lines"]
    verbose = [ln.text for ln in lines if ln.level == "verbose"]
    assert verbose and '"exit_code": 0' in verbose[0]


def test_an_edit_counts_its_lines_from_the_search_replace_blocks() -> None:
    p = Presenter()
    blocks = "<<<<<<< SEARCH\nx = 1\n=======\nx = 1\ny = 2\nz = 3\n>>>>>>> REPLACE\n"
    p.feed(ToolCallChunk(agent="companion", data=ToolCallData(id="e", name="edit_file",
                                                              arguments={"path": "calc.py", "content": blocks})))
    lines = p.feed(ToolResponseChunk(agent="companion", data=ToolResponseData(id="e", name="edit_file",
                                                                              content='{"path": "calc.py"}')))
    assert [ln.text for ln in lines if ln.kind == "action"] == ["Edit calc.py (+3 −1)"]


def test_engine_words_stay_behind_verbose() -> None:
    p = Presenter()
    engine = [StateChunk(agent="companion", data=StateData(from_step="PLANNING", to_step="EXECUTION", status="IN_PROGRESS",
                                                           source="decision", reason="go")),
              DecisionChunk(agent="companion", data=DecisionData(rationale="r", step="EXECUTION", pattern="single_call",
                                                                 next_step="x")),
              notice("companion", "vitals", "#c0.9 #m0.8"),
              notice("companion", "codec", "symops: missing_at at line 1"),
              delta("companion.specialized", "$ edit @ calc.py\n")]
    for chunk in engine:
        lines = p.feed(chunk)
        assert all(ln.level != "person" for ln in lines if ln.kind != "status"), chunk
        assert any(visible(ln, "verbose") for ln in lines)


def test_the_protocol_stream_shows_as_a_count_in_the_status_line() -> None:
    p = Presenter()
    p.feed(ProgressChunk(agent="companion.specialized", data=ProgressData(phase="start", what="asking m (single)")))
    assert p.waiting == "Reading the prompt"
    for piece in ("$ ", "create ", "@ a.py\n"):
        lines = p.feed(delta("companion.specialized", piece))
    assert [ln.text for ln in lines if ln.kind == "status"] == ["Writing · 16 characters"]


def test_the_raw_reply_waits_for_debug() -> None:
    lines = Presenter().feed(notice("companion", "raw_reply", "$ create @ a.py"))
    assert [ln.level for ln in lines] == ["debug"]


def test_a_plan_is_one_plain_line_without_its_id() -> None:
    p = Presenter()
    plan = PlanChunk(agent="companion", data=PlanData(plan_id="plan-20261128-001", status="proposed",
                                                      actions=["create hello.py: write_file proposed while planning"]))
    assert _person(p, plan) == ["Plan: create hello.py"]


def test_the_approval_card_has_a_headline_short_id_and_no_machine_text() -> None:
    job = "453d333ccc97467a961a6f2ed5dc7baf"
    p = Presenter()
    lines = p.feed(ApprovalChunk(agent="companion", data=ApprovalData(phase="request", job_id=job, request=REQUEST)))
    parts = next(ln.data for ln in lines if ln.kind == "approval")
    assert parts["headline"] == "Create hello.py — 2 lines" and parts["job"] == "453d333c"
    text = json.dumps(parts["points"])
    assert "plan-2026" not in text and "reversible" not in text and "/undo" in text
    assert headline({"operation": {"tool": "edit_file", "paths": ["c.py"]},
                     "diff_preview": "--- a/c.py\n+++ b/c.py\n@@\n-x\n+y\n+z\n"}) == "Edit c.py — +2 −1 lines"
    assert card({}, None, job)["headline"] == "A change needs your approval"


def test_a_stop_is_a_plain_sentence() -> None:
    p = Presenter()
    lines = _person(p, DoneChunk(agent="companion", data=DoneData(text="x", ending="no_progress")))
    assert lines == ["I stopped: the last turns changed nothing. Tell me what to do differently."]
    assert _person(p, DoneChunk(agent="companion", data=DoneData(text="x", ending="done"))) == []


def test_make_run_tells_the_protocol_layer_before_and_after() -> None:
    from duckflow.protocol_story import story

    examples = Path(__file__).resolve().parents[2] / "examples"
    said = story(examples / "02_messy_model_reply.symops")
    assert said.startswith("02_messy_model_reply.symops: the model wrote markdown-decorated actions → create config.py ✓")
    assert "edit README.md ✓ (repaired: markdown, missing @)" in said
    assert said.endswith("create test_config.py ✗ cut off → not run")
    assert "guessed from prose → not run" in story(examples / "03_code_without_action.symops")


def test_a_command_s_one_line_of_output_and_a_failure_s_error_line_are_on_its_action_line() -> None:
    # `duckflow run "Write total.py that prints the sum …"` showed `→ exit 0, 1 line`: the person
    # never saw the sum
    def said(stdout: str, stderr: str = "", code: int = 0) -> str:
        p = Presenter()
        p.feed(ToolCallChunk(agent="companion", data=ToolCallData(id="1", name="execute_shell",
                                                                  arguments={"command": "python3 total.py"})))
        out = json.dumps({"command": "python3 total.py", "ran": True, "exit_code": code, "stdout": stdout,
                          "stderr": stderr})
        lines = p.feed(ToolResponseChunk(agent="companion", data=ToolResponseData(
            id="1", name="execute_shell", content=out)))
        return next(ln.text for ln in lines if ln.kind == "action")

    assert said("12.0\n") == "Run python3 total.py → 12.0"
    assert said("") == "Run python3 total.py → exit 0, 0 lines"
    assert said("a\nb\n") == "Run python3 total.py → exit 0, 2 lines"
    trace = "Traceback (most recent call last):\n  File \"total.py\", line 5\nValueError: could not convert 'amount'\n"
    assert said("", trace, 1) == "Run python3 total.py → exit 1, 3 lines: ValueError: could not convert 'amount'"
    assert said("x" * 300 + "\n").endswith("→ exit 0, 1 line")  # too long to show on one line


def test_a_waiting_line_naming_a_task_of_several_lines_is_dropped_whole() -> None:
    from duckflow.core.chunks import ReplyChunk, ReplyData

    text = ("Writing notes.\n\nWaiting for your approval: job 1234abcd (write_file for: write a note\n"
            "Files the person attached:\ncalc.py:…)\nThen I run it.")
    shown = _person(Presenter(), ReplyChunk(agent="companion", data=ReplyData(text=text)))
    assert shown == ["", "Writing notes.\n\nThen I run it."]


def test_every_card_says_whether_and_how_it_can_be_undone_and_the_cost_against_the_limit() -> None:
    companion = card({**REQUEST, "rollback": "`duckflow undo` restores the checkpoint taken before the change"},
                     None, "j1")
    points = dict(companion["points"])
    assert points["Undo"] == "yes — /undo restores the checkpoint taken before the change"
    assert points["Impact"] == "1 file" and "Cost" not in points  # (no estimate: no cost line made up)
    coder = card({"operation": {"tool": "apply_patch", "paths": ["app.py"]}, "impact": "files: app.py",
                  "reversible": True, "rollback": "each file is checkpointed: `duckflow undo` restores it",
                  "cost_estimate": 50.0, "hard_required": ["cost_over_limit"], "risk": "medium",
                  "diff_preview": "--- a/app.py\n+++ b/app.py\n@@\n-x\n+y\n"}, None, "j2")
    points = dict(coder["points"])
    assert points["Undo"] == "yes — each file is checkpointed: /undo restores it"
    assert points["Cost"] == "about $50.00 — over the limit"
    assert points["A person must decide"] == "the cost estimate is over the limit (gate.cost_limit)"
    command = dict(card({"operation": {"tool": "execute_shell", "command": "make"}, "reversible": False,
                         "rollback": "a command's effects cannot be rolled back automatically"}, None, "j3")["points"])
    assert command["Undo"] == "no — a command's effects cannot be rolled back automatically"


def test_a_question_from_the_model_reaches_every_channel_with_its_options() -> None:
    p = Presenter()
    asked = notice("companion", "question", "Which name should the script have?\n  1. greet.py\n  2. hello.py\n"
                   "Answer with a number or your own words.", question="Which name should the script have?",
                   options=["greet.py", "hello.py"])
    lines = [ln for ln in p.feed(asked) if visible(ln, "person")]
    assert [ln.kind for ln in lines] == ["note"]  # a note: the terminal, the web page, Slack and LINE show it
    assert "1. greet.py" in lines[0].text and "2. hello.py" in lines[0].text
    assert lines[0].data == {"question": "Which name should the script have?", "options": ["greet.py", "hello.py"]}
