"""The allowed-transition table, the per-utterance limiter and error recovery (seed 001 §6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from duckflow.companion.state import Step
from duckflow.companion.transitions import TransitionController, TransitionLimiter, TransitionTable
from duckflow.errors import ConfigError
from tests.helpers import FakeClock


def test_default_table_is_the_seeds_with_done() -> None:
    t = TransitionTable.load()
    assert t.is_allowed(Step.PLANNING, Step.EXECUTION)
    assert t.is_allowed(Step.REVIEW, Step.DONE)
    assert t.is_allowed(Step.AWAITING_APPROVAL, Step.PLANNING)
    assert not t.is_allowed(Step.PLANNING, Step.DONE)
    assert not t.is_allowed(Step.EXECUTION, Step.DONE)
    assert t.recovery == {Step.EXECUTION: Step.PLANNING, Step.REVIEW: Step.PLANNING}


def test_second_decision_transition_in_one_utterance_is_refused_and_recorded() -> None:
    c = TransitionController(limiter=TransitionLimiter(clock=FakeClock()))
    assert c.request(Step.PLANNING, Step.EXECUTION, "plan done").allowed
    second = c.request(Step.EXECUTION, Step.REVIEW, "done already?")
    assert not second.allowed and "per utterance" in second.reason
    assert c.refused() == [second]
    c.limiter.new_utterance()
    assert c.request(Step.EXECUTION, Step.REVIEW, "next message").allowed


def test_outcome_transitions_are_checked_but_not_limited() -> None:
    c = TransitionController(limiter=TransitionLimiter(clock=FakeClock()))
    assert c.request(Step.PLANNING, Step.EXECUTION, "go").allowed
    assert c.request(Step.EXECUTION, Step.REVIEW, "tools finished", source="outcome").allowed
    assert not c.request(Step.REVIEW, Step.PLANNING, "not in table", source="outcome").allowed


def test_limiter_resets_after_sixty_seconds_without_an_utterance() -> None:
    clock = FakeClock()
    lim = TransitionLimiter(clock=clock)
    assert lim.can_transition()
    lim.record()
    assert not lim.can_transition()
    clock.advance(seconds=59)
    assert not lim.can_transition()
    clock.advance(seconds=2)
    assert lim.can_transition()


def test_unlisted_transition_is_refused_with_reason() -> None:
    c = TransitionController()
    rec = c.request(Step.PLANNING, Step.DONE, "skip ahead")
    assert not rec.allowed and "allowed-transition table" in rec.reason


def test_recovery_goes_back_to_planning_until_the_retry_limit() -> None:
    c = TransitionController(max_recovery_retries=2)
    assert c.recover(Step.EXECUTION, 0, "boom").to_step == Step.PLANNING
    assert c.recover(Step.REVIEW, 1, "tests fail").allowed
    last = c.recover(Step.EXECUTION, 2, "boom again")
    assert not last.allowed and "recovery limit" in last.reason


def test_table_from_a_file_and_bad_files(tmp_path: Path) -> None:
    f = tmp_path / "t.toml"
    f.write_text('[[allow]]\nfrom = "PLANNING"\nto = "DONE"\nreason = "trivial"\n', encoding="utf-8")
    t = TransitionTable.load(f)
    assert t.is_allowed(Step.PLANNING, Step.DONE) and not t.is_allowed(Step.PLANNING, Step.EXECUTION)
    f.write_text('[[allow]]\nfrom = "PLANING"\nto = "DONE"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown step 'PLANING'"):
        TransitionTable.load(f)
    with pytest.raises(ConfigError, match="cannot read"):
        TransitionTable.load(tmp_path / "missing.toml")
