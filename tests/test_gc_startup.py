"""`duckflow._gc.pause_for_startup`: no collection while a command sets up, then frozen and resumed."""

from __future__ import annotations

import gc

from duckflow._gc import pause_for_startup


def test_pause_then_freeze_and_resume() -> None:
    assert gc.isenabled()
    frozen_before = gc.get_freeze_count()
    try:
        started = pause_for_startup()
        assert not gc.isenabled()
        keep = [[i] for i in range(1000)]  # long-lived objects made during the set-up
        started()
        assert gc.isenabled() and gc.get_freeze_count() >= frozen_before + 1000
        started()  # twice: nothing more
        assert gc.isenabled() and keep
    finally:
        gc.unfreeze()
        gc.enable()


def test_a_caller_that_had_the_collector_off_keeps_it_off() -> None:
    gc.disable()
    try:
        started = pause_for_startup()
        started()
        assert not gc.isenabled()
    finally:
        gc.unfreeze()
        gc.enable()
