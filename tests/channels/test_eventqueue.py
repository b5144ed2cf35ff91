"""The background event log keeps order, checks types at once and loses nothing on close."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from duckflow.channels.eventqueue import BackgroundEvents
from duckflow.orchestra.events import EventLog


def test_events_are_written_in_order_masked_and_flushed_on_close(tmp_path: Path) -> None:
    log = BackgroundEvents(EventLog(tmp_path / "events.jsonl"))
    for i in range(50):
        log.emit("router.decision", f"s{i}", channel="http", primary_route="CHAT",
                 reason="key sk-abcdefghijklmnopqrstuvwxyz0123456789ABCD")
    with pytest.raises(ValueError):
        log.emit("not.a.type", "s")
    log.close()
    lines = [json.loads(x) for x in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert [x["session_id"] for x in lines] == [f"s{i}" for i in range(50)]
    assert "sk-abcdefghijklmnopqrstuvwxyz0123456789ABCD" not in json.dumps(lines)  # masked as EventLog does
    assert [e["session_id"] for e in BackgroundEvents(EventLog(tmp_path / "events.jsonl")).read()][:2] == ["s0", "s1"]
