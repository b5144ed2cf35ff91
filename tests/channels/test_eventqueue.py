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


def test_the_masking_memo_writes_what_the_sanitizer_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The memo of short masked values changes the cost, never the output: a secret repeated in
    many events is masked every time, a long text is scanned every time, and the memo is bounded."""
    import duckflow.orchestra.events as events
    from duckflow.security.sanitizer import mask_text

    monkeypatch.setattr(events, "MEMO_SIZE", 8)
    log = EventLog(tmp_path / "events.jsonl")
    secret = "key sk-abcdefghijklmnopqrstuvwxyz0123456789ABCD"
    long_text = "x" * 300 + " mail bob@example.com"
    for i in range(30):
        log.emit("router.decision", f"s{i % 3}", reason=secret, text=long_text, note=f"n{i}",
                 evidence=[secret, "rule:greeting"])
    lines = [json.loads(x) for x in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert len(lines) == 30
    for rec in lines:
        assert rec["reason"] == mask_text(secret) != secret
        assert rec["evidence"] == [mask_text(secret), "rule:greeting"]
        assert "bob@example.com" not in rec["text"] and rec["text"] == mask_text(long_text)
    assert len(log._memo) <= 8  # bounded: cleared when full
    assert all(len(k) <= events.MEMO_MAX_LEN for k in log._memo)  # long values are never kept
    (tmp_path / "events.jsonl").unlink()
    tmp_path.joinpath("gone").mkdir()
    moved = EventLog(tmp_path / "gone" / "events.jsonl")
    moved.emit("loop.stop", "s")
    tmp_path.joinpath("gone", "events.jsonl").unlink()
    tmp_path.joinpath("gone").rmdir()  # the folder removed while the log is open: made again
    moved.emit("loop.stop", "s")
    assert tmp_path.joinpath("gone", "events.jsonl").exists()


def test_on_an_event_loop_events_go_to_the_thread_in_batches_in_order(tmp_path: Path) -> None:
    import asyncio

    log = BackgroundEvents(EventLog(tmp_path / "events.jsonl"))
    written: list[int] = []
    real = log._write

    def write(batch: list[tuple[object, object]]) -> None:
        written.append(len(batch))
        real(batch)

    log._behind._write = write  # the write-behind helper's one writer: count what it gets at once

    async def main() -> None:
        for i in range(20):
            log.emit("final.route", f"s{i}", final_route="CHAT")
            await asyncio.sleep(0)
        await asyncio.sleep(0.1)  # the writer has taken the first stretch by now
        log.emit("loop.stop", "last")

    asyncio.run(main())
    log.flush()
    assert written[0] == 20 and sum(written) == 21  # the 20 went to the thread together
    assert [e["session_id"] for e in log.read()] == [f"s{i}" for i in range(20)] + ["last"]
    log.close()
