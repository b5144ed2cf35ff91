"""TraceLogger: JSONL shape, masking, non-blocking emit, flush/close, OTLP export to a local receiver."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from duckflow.core.trace import NullTrace, TraceLogger, mask_record, otlp_endpoint_from_env
from duckflow.security.sanitizer import Sanitizer

GH = "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8"
AWS_ID = "AKIA" + "Q3EGRT7XKM2PZ5JD"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_records_have_appendix_c_shape(tmp_path: Path) -> None:
    path = tmp_path / "t" / "trace.jsonl"
    with TraceLogger(path, otlp_endpoint="") as trace:
        trace.emit("tool_end", session="f3a", agent="DraftAgent", tool="generate_draft",
                   tok_prompt=812, tok_completion=74, duration_ms=940,
                   result={"new_text": "...", "change_map": []})
        assert trace.flush(5)
    (rec,) = _lines(path)
    assert list(rec)[:4] == ["event", "time", "session", "agent"]
    assert rec["event"] == "tool_end" and rec["session"] == "f3a" and rec["agent"] == "DraftAgent"
    assert rec["tool"] == "generate_draft" and rec["tok_prompt"] == 812 and rec["tok_completion"] == 74
    assert rec["duration_ms"] == 940 and rec["result"] == {"new_text": "...", "change_map": []}
    assert rec["time"].endswith("Z") and len(rec["time"]) == len("2025-05-23T04:14:33.892Z")


def test_secrets_in_trace_records_are_masked_before_writing(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    trace = TraceLogger(path, otlp_endpoint="")
    trace.emit("tool_start", session="s", agent="a", tool="shell",
               arguments={"command": f"curl -H 'Authorization: Bearer {GH}' https://x", "password": "hunter22"})
    trace.emit("error", session="s", agent="a", message=f"key {AWS_ID} rejected; mail bob@example.com")
    trace.close()
    raw = path.read_text(encoding="utf-8")
    for secret in (GH, AWS_ID, "hunter22", "bob@example.com"):
        assert secret not in raw
    recs = _lines(path)
    assert recs[0]["arguments"]["password"].startswith("[SECRET:")
    assert "[SECRET:aws_access_key#" in recs[1]["message"] and "[PII:email#" in recs[1]["message"]


def test_mask_record_keeps_keys_and_structure() -> None:
    rec = {"event": "llm_call", "session": "s", "result": {"token": GH, "n": 3, "items": ["x", AWS_ID]}}
    out = mask_record(rec, Sanitizer())
    assert out["result"]["n"] == 3 and out["result"]["items"][0] == "x"
    assert GH not in json.dumps(out) and AWS_ID not in json.dumps(out)
    clean = {"event": "agent_end", "session": "s", "result": "all fine"}
    assert mask_record(clean, Sanitizer()) is clean


class _SlowSanitizer(Sanitizer):
    def __init__(self, gate: threading.Event) -> None:
        super().__init__()
        self.gate = gate

    def mask(self, text: str, mapping: dict[str, str] | None = None) -> Any:
        self.gate.wait(5)
        return super().mask(text, mapping)


async def test_emit_does_not_block_the_event_loop_while_the_writer_is_stuck(tmp_path: Path) -> None:
    gate = threading.Event()
    trace = TraceLogger(tmp_path / "t.jsonl", sanitizer=_SlowSanitizer(gate), otlp_endpoint="")
    t0 = time.perf_counter()
    for i in range(2000):
        trace.emit("retry", session="s", agent="a", attempt=i)
    await asyncio.sleep(0)
    elapsed = time.perf_counter() - t0
    assert elapsed < 1.0  # the writer is blocked on `gate`; emit only queued
    assert not (tmp_path / "t.jsonl").exists() or (tmp_path / "t.jsonl").read_text() == ""
    gate.set()
    assert await asyncio.to_thread(trace.flush, 20)
    trace.close()
    assert len(_lines(tmp_path / "t.jsonl")) == 2000


def test_overflow_is_counted_and_reported_not_silently_lost(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import duckflow.core.trace as trace_mod

    monkeypatch.setattr(trace_mod, "QUEUE_LIMIT", 5)
    gate = threading.Event()
    trace = TraceLogger(tmp_path / "t.jsonl", sanitizer=_SlowSanitizer(gate), otlp_endpoint="")
    for i in range(50):
        trace.emit("retry", attempt=i)
    assert trace.dropped > 0
    gate.set()
    trace.emit("agent_end", agent="late")
    trace.close()
    recs = _lines(tmp_path / "t.jsonl")
    dropped = [r for r in recs if r["event"] == "trace_dropped"]
    assert dropped and sum(r["count"] for r in dropped) + len(recs) - len(dropped) == 51


def test_emit_after_close_is_counted_and_null_trace_is_inert(tmp_path: Path) -> None:
    trace = TraceLogger(tmp_path / "t.jsonl", otlp_endpoint="")
    trace.close()
    trace.emit("agent_start")
    assert trace.dropped == 1
    null = NullTrace()
    null.emit("agent_start", session="s", x=1)
    assert null.flush() is True
    null.close()


def test_callback_adapts_on_event_hooks(tmp_path: Path) -> None:
    trace = TraceLogger(tmp_path / "t.jsonl", otlp_endpoint="")
    hook = trace.callback(session="s9", agent="Coder")
    hook("retry", {"attempt": 2, "status": 429})
    trace.close()
    (rec,) = _lines(tmp_path / "t.jsonl")
    assert (rec["event"], rec["session"], rec["agent"], rec["attempt"], rec["status"]) == ("retry", "s9", "Coder", 2, 429)


def test_endpoint_from_env_prefers_trace_variable() -> None:
    assert otlp_endpoint_from_env({}) is None
    assert otlp_endpoint_from_env({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318"}) == "http://a:4318"
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "TRACE_OTLP_ENDPOINT": "http://b:4318"}
    assert otlp_endpoint_from_env(env) == "http://b:4318"


def _attr(span: Any, key: str) -> Any:
    for kv in span.attributes:
        if kv.key == key:
            v = kv.value
            return getattr(v, v.WhichOneof("value"))
    return None


def test_otlp_export_sends_masked_spans_to_a_local_receiver(tmp_path: Path, otlp_receiver: Any,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACE_OTLP_ENDPOINT", otlp_receiver.url)
    trace = TraceLogger(tmp_path / "t.jsonl")
    assert trace.otlp_endpoint == otlp_receiver.url
    trace.emit("agent_start", session="s1", agent="Coder", input=f"use token {GH}")
    trace.emit("llm_call", session="s1", agent="Coder", model="gpt-x", tok_prompt=10,
               tok_completion=5, duration_ms=12)
    trace.emit("tool_start", session="s1", agent="Coder", tool="read_file", call_id="c1")
    trace.emit("tool_end", session="s1", agent="Coder", tool="read_file", call_id="c1",
               duration_ms=3, result=f"AWS {AWS_ID} / alice@example.com")
    trace.emit("agent_end", session="s1", agent="Coder", tok_prompt=10, tok_completion=5)
    assert trace.flush(10)
    trace.close()
    assert trace.errors == []
    assert otlp_receiver.paths and all(p == "/v1/traces" for p in otlp_receiver.paths)
    assert all(ct == "application/x-protobuf" for ct in otlp_receiver.content_types)
    spans = {s.name: s for s in otlp_receiver.spans()}
    assert set(spans) == {"agent Coder", "llm_call", "tool read_file"}
    agent, tool, llm = spans["agent Coder"], spans["tool read_file"], spans["llm_call"]
    assert tool.parent_span_id == agent.span_id and llm.parent_span_id == agent.span_id
    assert tool.trace_id == agent.trace_id
    assert _attr(tool, "duckflow.session") == "s1" and _attr(tool, "duckflow.tool") == "read_file"
    assert _attr(llm, "duckflow.tok_prompt") == 10
    assert llm.end_time_unix_nano - llm.start_time_unix_nano == 12_000_000
    payload = b"".join(otlp_receiver.bodies)
    for secret in (GH, AWS_ID, "alice@example.com"):
        assert secret.encode() not in payload
    assert "[SECRET:aws_access_key#" in _attr(tool, "duckflow.result")
    assert "[SECRET:github_token#" in _attr(agent, "duckflow.input")


def test_otlp_export_failure_does_not_stop_the_jsonl_file(tmp_path: Path) -> None:
    trace = TraceLogger(tmp_path / "t.jsonl", otlp_endpoint="http://127.0.0.1:1")
    trace.emit("agent_start", session="s", agent="a")
    trace.emit("agent_end", session="s", agent="a")
    trace.flush(10)
    trace.close(10)
    assert len(_lines(tmp_path / "t.jsonl")) == 2


def test_trace_from_config(tmp_path: Path) -> None:
    from duckflow.config import TraceConfig
    from duckflow.core.trace import default_trace_path, trace_from_config

    assert isinstance(trace_from_config(TraceConfig(enabled=False)), NullTrace)
    t = trace_from_config(TraceConfig(path=str(tmp_path / "x.jsonl"), otlp_endpoint=""))
    assert isinstance(t, TraceLogger) and t.path == tmp_path / "x.jsonl" and t.otlp_endpoint is None
    t.close()
    assert default_trace_path().parent.name == "traces"


def test_unwritable_path_is_reported_once_not_per_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    trace = TraceLogger(blocker / "sub" / "t.jsonl", otlp_endpoint="")
    for i in range(5):
        trace.emit("retry", attempt=i)
    trace.close()
    # one error kept per batch that could not be written (the batch is one write), none written
    assert 1 <= len(trace.errors) <= 5 and "cannot write trace file" in trace.errors[0] and trace.written == 0
    assert capsys.readouterr().err.count("cannot write trace file") == 1


def _wait_lines(path: Path, n: int, timeout: float = 10.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and len(path.read_text(encoding="utf-8").splitlines()) >= n:
            break
        time.sleep(0.01)
    return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0


def test_records_are_written_in_batches_not_one_wakeup_each(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A burst waits for its batch (BATCH_DELAY_S after its first record); flush writes it now."""
    import duckflow.core.trace as trace_mod

    monkeypatch.setattr(trace_mod, "BATCH_DELAY_S", 30.0)
    path = tmp_path / "t.jsonl"
    trace = TraceLogger(path, otlp_endpoint="")
    for i in range(10):
        trace.emit("retry", attempt=i, password="hunter22")
    time.sleep(0.3)
    assert not path.exists() or path.read_text(encoding="utf-8") == ""  # still gathering the batch
    assert trace.flush(10)
    recs = _lines(path)
    assert [r["attempt"] for r in recs] == list(range(10)) and "hunter22" not in path.read_text()
    trace.emit("agent_end", agent="last")
    trace.close()  # close writes what waits, at once
    assert _lines(path)[-1]["event"] == "agent_end"


def test_a_batch_goes_out_after_its_delay_or_when_full(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import duckflow.core.trace as trace_mod

    monkeypatch.setattr(trace_mod, "BATCH_DELAY_S", 0.05)
    late = TraceLogger(tmp_path / "late.jsonl", otlp_endpoint="")
    late.emit("retry", attempt=1)
    assert _wait_lines(tmp_path / "late.jsonl", 1) == 1  # no flush, no close: the delay passed
    late.close()
    monkeypatch.setattr(trace_mod, "BATCH_DELAY_S", 30.0)
    monkeypatch.setattr(trace_mod, "BATCH_MAX", 5)
    full = TraceLogger(tmp_path / "full.jsonl", otlp_endpoint="")
    for i in range(5):
        full.emit("retry", attempt=i)
    assert _wait_lines(tmp_path / "full.jsonl", 5) == 5  # BATCH_MAX waiting: written without the delay
    full.close()


def test_processors_get_every_masked_record_and_a_failing_one_is_dropped(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    got: list[tuple[str, float]] = []
    trace = TraceLogger(tmp_path / "t.jsonl", otlp_endpoint="")
    trace.add_processor(lambda record, ts: got.append((json.dumps(record), ts)), "counter")

    def broken(record: dict[str, Any], ts: float) -> None:
        raise RuntimeError("exporter down")

    trace.add_processor(broken, "metrics export")
    for i in range(3):
        trace.emit("tool_end", tool="x", note=f"key sk-abcdefghijklmnopqrstuvwxyz0123456789AB{i}")
    trace.close()
    assert len(got) == 3 and all("sk-abcdefghijklmnopqrstuvwxyz" not in text for text, _ in got)  # masked first
    assert all(ts > 0 for _, ts in got)
    assert trace.errors == ["metrics export failed: exporter down"]  # once, then dropped
    assert capsys.readouterr().err.count("metrics export failed") == 1
    assert len((tmp_path / "t.jsonl").read_text().splitlines()) == 3  # the file is written all the same
