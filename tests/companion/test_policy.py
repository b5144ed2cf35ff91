"""Each dialog-policy rule of seed 001 §9."""

from __future__ import annotations

from duckflow.companion.policy import DialogPolicy, Situation

P = DialogPolicy()


def test_clarify_asks_at_most_one_question_only_when_unsure_or_high_impact() -> None:
    qs = ["Which file?", "Which style?"]
    assert P.clarify(Situation("do it", "ok", confidence=0.9, questions=qs)) is None
    assert P.clarify(Situation("do it", "ok", confidence=0.3, questions=qs)) == "Which file?"
    assert P.clarify(Situation("do it", "ok", confidence=0.9, impact="high", questions=qs)) == "Which file?"
    out = P.apply(Situation("do it", "ok", confidence=0.2, questions=qs))
    assert out.text.count("?") == 1 and "clarify" in out.applied


def test_low_vitals_confidence_lowers_the_bar_for_asking() -> None:
    sit = Situation("x", "ok", confidence=0.6, vitals_confidence=0.8, questions=["Which?"])
    assert P.clarify(sit) is None
    sit.vitals_confidence = 0.2
    assert P.clarify(sit) == "Which?"


def test_propose_only_with_two_real_options() -> None:
    assert P.propose(["use sqlite"]) is None
    assert P.propose(["use sqlite", "Use SQLite.", ""]) is None
    text = P.propose(["use sqlite", "use a JSON file"])
    assert text is not None and "Option A: use sqlite" in text and "Option B: use a JSON file" in text


def test_gate_rule_covers_write_delete_execute_only() -> None:
    assert all(P.needs_gate(op) for op in ("write", "delete", "execute"))
    assert not any(P.needs_gate(op) for op in ("read", "list", "search"))


def test_summarize_next_only_for_long_replies() -> None:
    short = P.apply(Situation("x", "done.", summary="s", next_step="run tests"))
    assert "Summary:" not in short.text
    long = P.apply(Situation("x", "line\n" * 30, summary="wrote 3 files", next_step="run tests"))
    assert long.text.rstrip().endswith("Next: run tests") and "Summary: wrote 3 files" in long.text


def test_nudge_only_when_the_person_says_they_are_stuck() -> None:
    calm = P.apply(Situation("please add a test", "ok", first_step="open tests/"))
    assert "First step" not in calm.text
    stuck = P.apply(Situation("I'm stuck with this bug", "ok", first_step="run the failing test"))
    assert stuck.text.endswith("First step: run the failing test")
    assert P.is_stuck("どうすればいいか分からない")
