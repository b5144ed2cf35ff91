"""The Main JSON (§7.1): tolerant read, one re-ask, safe default; PlanTool/ActionSpec (§12.1.1)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from duckflow.companion.decision import read_decision
from duckflow.companion.plan import ActionSpec, PlanError, PlanTool

GOOD = {
    "rationale": "plan first", "goal_consistency": "yes", "constraint_check": "yes",
    "next_step": "continue", "step": "execution", "prompt_pattern": "base_main_specialized",
    "state_delta": {"goal": "x"},
}


def _asker(*replies: str) -> tuple[list[str | None], object]:
    seen: list[str | None] = []
    it = iter(replies)

    async def ask(reask: str | None) -> str:
        seen.append(reask)
        return next(it)

    return seen, ask


async def test_fenced_json_with_prose_is_repaired() -> None:
    seen, ask = _asker("Sure!\n```json\n" + json.dumps(GOOD) + ",\n```")
    r = await read_decision(ask, "PLANNING")  # type: ignore[arg-type]
    assert r.decision.step == "EXECUTION" and not r.reasked and len(seen) == 1


async def test_invalid_json_is_reasked_once_with_errors() -> None:
    bad = dict(GOOD, next_step="maybe")
    seen, ask = _asker(json.dumps(bad), json.dumps(GOOD))
    r = await read_decision(ask, "PLANNING")  # type: ignore[arg-type]
    assert r.reasked and not r.safe_default and r.decision.next_step == "continue"
    assert seen[0] is None and seen[1] is not None and "next_step" in seen[1]


async def test_still_invalid_gives_the_safe_default_and_a_message() -> None:
    seen, ask = _asker("I think we should write the file.", "no json again")
    r = await read_decision(ask, "REVIEW")  # type: ignore[arg-type]
    assert r.safe_default and len(seen) == 2
    assert r.decision.next_step == "pending_user" and r.decision.step == "REVIEW"
    assert r.decision.prompt_pattern == "base_main"
    assert "could not be read" in r.message


def test_plan_tool_propose_and_action_specs() -> None:
    t = PlanTool()
    pid = t.propose("Plan: greet\n1. write hello.py")
    t.set_action_specs(pid, [ActionSpec("create", "hello.py", "the greeting")])
    assert t.get(pid).action_specs[0].path == "hello.py"
    again = PlanTool.from_dict(t.to_dict())
    assert again.get(pid).action_specs == t.get(pid).action_specs
    with pytest.raises(PlanError):
        t.set_action_specs(pid, [])
    with pytest.raises(PlanError):
        t.set_action_specs("nope", [ActionSpec("create", "a", "b")])
    with pytest.raises(PlanError):
        t.propose("   ")


_PIECES = ['{', '}', '"rationale": "plan first", ', '"goal_consistency": "yes", ', '"constraint_check": "yes", ',
           '"next_step": "continue", ', '"step": "execution", ', '"prompt_pattern": "base_main", ',
           '"reply": "<think>no</think> hi", ', '"reply": "hi", ', '"state_delta": {"goal": "x"}, ',
           '"state_delta": [[[[]]]], ', '```json\n', '\n```', ' ', '\n', ',', '"', 'Sure: ', '"x": 1',
           '"reply": "' + "[" * 210 + '", ', "[" * 201 + "]" * 201]


_VALUES = st.lists(st.sampled_from(["hi", " ", "<think>", "</think>", "<reasoning>", "</thinking>", "```",
                                     "```json\n", json.dumps(GOOD), "\n", "{", "[", "\\", '"']), max_size=8).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14).map("".join), _VALUES)
def test_the_decisions_fast_read_gives_read_jsons_result(text: str, value: str) -> None:
    """The usual reply (one bare JSON object) is read without read_json's scan: the result is
    always read_json's own — on replies made of JSON pieces, fences and brackets, and on valid
    decisions whose strings hold reasoning tags, fences or a decision of their own."""
    from duckflow.companion.decision import MainDecision, _read
    from duckflow.protocols.jsonreply import read_json

    valid = [json.dumps(dict(GOOD, reply=value)), json.dumps(dict(GOOD, rationale=value or "r")),
             json.dumps(dict(GOOD, state_delta={"goal": value}), indent=1)]
    for candidate in (text, "{" + text, json.dumps(GOOD) + text, json.dumps(GOOD), *valid):
        fast, slow = _read(candidate), read_json(candidate, MainDecision)
        assert (fast.ok, fast.repairs, fast.errors) == (slow.ok, slow.repairs, slow.errors), candidate
        assert (fast.value.model_dump() if fast.ok else None) == (slow.value.model_dump() if slow.ok else None)
