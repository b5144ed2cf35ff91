"""`duckflow._gc.pause_for_startup`: no collection while a command sets up, then frozen and resumed."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from duckflow._gc import pause_for_startup, resume


def test_pause_then_freeze_and_resume() -> None:
    assert gc.isenabled()
    frozen_before = gc.get_freeze_count()
    threshold = gc.get_threshold()
    try:
        started = pause_for_startup()
        assert not gc.isenabled()
        keep = [[i] for i in range(1000)]  # long-lived objects made during the set-up
        started()
        assert gc.isenabled() and gc.get_freeze_count() >= frozen_before + 1000
        started()  # twice: nothing more
        assert gc.isenabled() and keep and gc.get_threshold()[0] == 10_000
        assert pause_for_startup() is not started  # a new pause once this one ended
        resume()
    finally:
        gc.unfreeze()
        gc.enable()
        gc.set_threshold(*threshold)


def test_a_caller_that_had_the_collector_off_keeps_it_off() -> None:
    threshold = gc.get_threshold()
    gc.disable()
    try:
        started = pause_for_startup()
        assert pause_for_startup() is started  # the pause in force is kept, not nested
        started()
        assert not gc.isenabled()
    finally:
        gc.unfreeze()
        gc.enable()
        gc.set_threshold(*threshold)


@pytest.mark.parametrize("args", [["config", "show", "--json"], ["run", "Create hello.py", "--model",
                                                                 "scripted:demo", "--auto-approve-workspace"]])
def test_the_command_pauses_from_its_first_line_and_collects_again_once_set_up(args: list[str],
                                                                              tmp_path: Path) -> None:
    code = ("import gc, json, os, sys\n"
            "from duckflow.channels.cli.main import console\n"
            "paused = []\n"
            "import duckflow.channels.cli.main as m\n"
            "real = m._dispatch\n"
            "m._dispatch = lambda a: (paused.append(not gc.isenabled()), real(a))[1]\n"
            "rc = console()\n"
            "sys.stderr.write(json.dumps({'rc': rc, 'paused': paused, 'enabled': gc.isenabled(), "
            "'threshold': gc.get_threshold()[0]}) + '\\n')\n")
    env = {**os.environ, "DUCKFLOW_HOME": str(tmp_path / "h"), "DUCKFLOW_CONFIG": os.devnull,
           "DUCKFLOW_NO_FAST_EXIT": "1", "DUCKFLOW_DEMO_DELAY": "0"}
    proc = subprocess.run([sys.executable, "-c", code, *args, "-w", str(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=120)
    seen = json.loads(proc.stderr.strip().splitlines()[-1])
    assert seen == {"rc": 0, "paused": [True], "enabled": True, "threshold": 10_000}, proc.stderr
