"""The event log rotates past its size limit, keeps `keep` files, and reads across them in order;
`duckflow events` on a real home sees the rotated events too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from duckflow.orchestra.events import EventLog


def _emit(log: EventLog, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        log.emit("router.decision", f"s{i % 3}", initial_route="CHAT", final_route="CHAT", note=f"event {i:04d}")


def test_the_log_rotates_keeps_its_files_and_reads_them_in_order(tmp_path: Path) -> None:
    path = tmp_path / "events" / "events.jsonl"
    log = EventLog(path, max_bytes=2000, keep=2)
    _emit(log, 200)
    files = sorted(p.name for p in path.parent.iterdir())
    assert files == ["events.jsonl", "events.jsonl.1", "events.jsonl.2"]  # never more than keep + 1
    assert all(p.stat().st_size <= 2000 + 600 for p in path.parent.iterdir())  # at most one line past
    notes = [e["note"] for e in log.read()]
    numbers = [int(n.split()[1]) for n in notes]
    assert numbers == sorted(numbers) and numbers[-1] == 199  # oldest first, the newest kept
    assert numbers[0] > 0  # the oldest events were dropped with the oldest file
    assert [e["note"] for e in log.read(session="s1")] == [n for n in notes if int(n.split()[1]) % 3 == 1]
    lines = [json.loads(line) for p in log.files() for line in p.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == len(notes)  # no line split across files


def test_keep_zero_keeps_only_the_current_file(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "e.jsonl", max_bytes=1000, keep=0)
    _emit(log, 50)
    assert [p.name for p in tmp_path.iterdir()] in (["e.jsonl"], [])
    assert all(int(e["note"].split()[1]) >= 40 for e in log.read())


def test_duckflow_events_reads_the_rotated_files_of_a_real_home(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from duckflow.config import load_config

    home = tmp_path / "home"
    config = tmp_path / "config.toml"
    config.write_text("[routing]\nevents_max_mb = 0.002\nevents_keep = 1\n", encoding="utf-8")
    monkeypatch.setenv("DUCKFLOW_HOME", str(home))
    monkeypatch.setenv("DUCKFLOW_CONFIG", str(config))
    log = EventLog.from_settings(load_config().routing)  # as the orchestrator and the server make it
    assert log.max_bytes == int(0.002 * 1024 * 1024) and log.keep == 1
    assert log.path == home / "events" / "events.jsonl"
    _emit(log, 30)
    assert (home / "events" / "events.jsonl.1").exists() and not (home / "events" / "events.jsonl.2").exists()
    proc = subprocess.run([sys.executable, "-m", "duckflow", "events", "--json"], env=dict(os.environ),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "event 0029" in proc.stdout and proc.stdout.index("event 00") < proc.stdout.index("event 0029")
