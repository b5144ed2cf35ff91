"""TraceLogger: masked JSONL trace events written by a background thread, optional OTLP spans.

    trace = TraceLogger(path)                      # or TraceLogger(None, otlp_endpoint=...)
    trace.emit("tool_end", session="s1", agent="Coder", tool="read_file",
               tok_prompt=812, tok_completion=74, duration_ms=940, result={...})
    trace.flush(); trace.close()

One JSON object per line (`grep`/`jq` can read a trace without Duckflow; seed 004 app. C):
`event`, `time` (ISO-8601 UTC,
milliseconds, `Z`), `session`, `agent`, then the event's own fields. `emit()` only stamps
the time and appends the record to a buffer — it never blocks the event loop and never does I/O.
A writer thread takes the buffer in batches, serialises each record, masks it with the
sanitizer, appends it to the file and, when an OTLP endpoint is set, turns it into spans
(`SpanBuilder`, OTLP/HTTP). A batch is taken BATCH_DELAY_S after its first record (or at once
when BATCH_MAX wait, or on `flush`/`close`), as OpenTelemetry's batch span processor does: a
writer woken for every record took the GIL from the turn in 5 ms slices, ~100 hand-offs in a
five-turn `duckflow run`, each a wait for the CPU on a loaded machine. A process killed outright
loses at most the last BATCH_DELAY_S of trace; `close` (every command's, the server's) writes all.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from duckflow.store.jsonlog import JsonlFile

if TYPE_CHECKING:
    from duckflow.config import TraceConfig
    from duckflow.security.sanitizer import Sanitizer

EVENTS = (
    "agent_start", "tool_start", "tool_end", "handoff_start", "handoff_end", "agent_end",
    "llm_call", "retry", "guardrail", "error",
)
QUEUE_LIMIT = 50_000  # records waiting at most; more are counted as dropped and reported
BATCH_DELAY_S = 0.2  # a batch is written this long after its first record (sooner on flush/close):
# short enough that a batch stays small (its masking holds the GIL in one burst), long enough
# that a turn's records go out together
BATCH_MAX = 128  # or as soon as this many wait


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{int(ts * 1000) % 1000:03d}Z"


def otlp_endpoint_from_env(environ: dict[str, str] | None = None) -> str | None:
    """`TRACE_OTLP_ENDPOINT`, else the standard `OTEL_EXPORTER_OTLP_ENDPOINT`, else None."""
    env = os.environ if environ is None else environ
    return env.get("TRACE_OTLP_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or None


def mask_record(record: dict[str, Any], sanitizer: Sanitizer) -> dict[str, Any]:
    """The record with every secret and personal datum masked, keys kept.

    The whole serialised line is masked first, so a secret is recognised with its context
    (`"password": "..."`); if that ever yields invalid JSON, each string is masked on its
    own, with the field's name as context.
    """
    line = json.dumps(record, ensure_ascii=False, default=str)
    masked = sanitizer.mask(line).text
    if masked == line:
        return record
    try:
        out = json.loads(masked)
    except ValueError:
        out = None
    if isinstance(out, dict) and list(out) == list(record):
        return out
    return _mask_walk(record, sanitizer, "")  # pragma: no cover - defensive


def _mask_walk(value: Any, sanitizer: Sanitizer, name: str) -> Any:
    if isinstance(value, str):
        text = sanitizer.mask(f"{name}={value!r}" if name else value).text
        if name:
            prefix = f"{name}="
            return text[len(prefix) + 1 : -1] if text.startswith(prefix) else sanitizer.mask(value).text
        return text
    if isinstance(value, dict):
        return {k: _mask_walk(v, sanitizer, str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_mask_walk(v, sanitizer, name) for v in value]
    return value


class TraceLogger:
    """Writes trace events as masked JSONL (and OTLP spans) without blocking the caller.

    `path=None` writes no file (useful with OTLP only). `otlp_endpoint=None` reads
    `TRACE_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_ENDPOINT`; `""` turns OTLP off.
    Records that cannot be queued (more than QUEUE_LIMIT waiting) are counted and reported
    in a `trace_dropped` record, never lost silently.
    """

    def __init__(
        self,
        path: str | Path | None,
        *,
        sanitizer: Sanitizer | None = None,
        otlp_endpoint: str | None = None,
        service_name: str = "duckflow",
    ) -> None:
        self.path = Path(path) if path is not None else None
        self._sanitizer = sanitizer  # the default one is loaded by the writer thread
        self.otlp_endpoint = otlp_endpoint_from_env() if otlp_endpoint is None else (otlp_endpoint or None)
        self.service_name = service_name
        self.dropped = 0
        self.written = 0
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._buffer: list[dict[str, Any]] = []  # under _lock
        self._queued = 0  # records accepted (under _lock)
        self._done = threading.Condition()  # guards _written_total; notified after each batch
        self._written_total = 0  # records taken from the buffer and handled
        self._has_data = threading.Event()  # set when the buffer stops being empty
        self._kick = threading.Event()  # write the batch now (flush, close, BATCH_MAX)
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._closed = False
        self._file = JsonlFile(self.path) if self.path is not None else None  # the one JSONL writer
        self._spans: SpanBuilder | None = None
        # hooks each masked record goes to after the file, in the writer thread; OTLP is one
        self._processors: list[tuple[str, Callable[[dict[str, Any], float], None]]] = []
        if self.otlp_endpoint:
            self.add_processor(self._export_span, f"OTLP export to {self.otlp_endpoint}")

    @property
    def sanitizer(self) -> Sanitizer:
        if self._sanitizer is None:
            from duckflow.security.sanitizer import default_sanitizer

            self._sanitizer = default_sanitizer()
        return self._sanitizer

    # -- producer side -------------------------------------------------------------------

    def emit(self, event: str, *, session: str = "", agent: str = "", **fields: Any) -> None:
        """Queue one event. Never blocks and never raises for a full queue or a closed logger."""
        if self._closed:
            self.dropped += 1
            return
        record: dict[str, Any] = {"event": event, "time": time.time(), "session": session, "agent": agent}
        record.update(fields)
        self._ensure_thread()
        with self._lock:
            if len(self._buffer) >= QUEUE_LIMIT:
                self.dropped += 1
                return
            self._buffer.append(record)
            self._queued += 1
            waiting = len(self._buffer)
        if waiting == 1:
            self._has_data.set()
        elif waiting >= BATCH_MAX:
            self._kick.set()

    def callback(self, *, session: str = "", agent: str = "") -> Callable[[str, dict[str, Any]], None]:
        """An `on_event(name, fields)` callable (as llm/retry.py takes) that emits here."""

        def on_event(name: str, fields: dict[str, Any]) -> None:
            self.emit(name, session=session, agent=agent, **fields)

        return on_event

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every queued record is written (and spans exported); False on timeout."""
        thread = self._thread
        if thread is None:
            return True
        deadline = time.monotonic() + timeout
        with self._lock:
            target = self._queued
        self._kick.set()
        with self._done:
            while self._written_total < target:
                left = deadline - time.monotonic()
                if left <= 0 or not thread.is_alive():
                    return False
                self._done.wait(min(left, 0.1))
        spans = self._spans
        if spans is not None:
            return spans.flush(max(0.1, deadline - time.monotonic()))
        return True

    def close(self, timeout: float = 10.0) -> None:
        """Flush, stop the writer thread, close the file and shut the OTLP exporter down."""
        if self._closed:
            return
        self.flush(timeout)
        self._closed = True
        thread = self._thread
        if thread is not None:
            with self._lock:
                self._stopping = True
            self._has_data.set()
            self._kick.set()
            thread.join(timeout)

    def __enter__(self) -> TraceLogger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writer side ---------------------------------------------------------------------

    def _ensure_thread(self) -> None:
        if self._thread is not None:
            return
        with self._lock:
            if self._thread is None:
                t = threading.Thread(target=self._run, name="duckflow-trace", daemon=True)
                t.start()
                self._thread = t

    def _run(self) -> None:
        try:
            while True:
                self._has_data.wait()  # no GIL needed while nothing waits
                self._kick.wait(BATCH_DELAY_S)  # gather a batch
                with self._lock:
                    batch, self._buffer = self._buffer, []
                    self._has_data.clear()
                    self._kick.clear()
                    stopping = self._stopping
                lines: list[str] = []
                for record in batch:
                    self._write(record, lines)
                if self._file is not None and lines:  # the batch in one write
                    try:
                        self.written += self._file.append(lines)
                    except OSError as exc:
                        self._error(f"cannot write trace file {self.path}: {exc}")
                with self._done:
                    self._written_total += len(batch)
                    self._done.notify_all()
                if stopping:
                    return
        finally:
            self._shutdown()

    def _write(self, record: dict[str, Any], lines: list[str]) -> None:
        if self.dropped:
            with self._lock:
                lost, self.dropped = self.dropped, 0
            self._write_one({"event": "trace_dropped", "time": time.time(), "session": "",
                             "agent": "", "count": lost}, lines)
        self._write_one(record, lines)

    def _write_one(self, record: dict[str, Any], lines: list[str]) -> None:
        """The record masked, as a line of the batch, and as an OTLP span when that is on."""
        ts = float(record["time"])
        record = dict(record, time=_iso(ts))
        try:
            masked = mask_record(record, self.sanitizer)
        except Exception as exc:  # a sanitizer bug must not let the secret through
            self._error(f"sanitizer failed ({exc!r}); event {record.get('event')} not written")
            return
        if self._file is not None:
            lines.append(json.dumps(masked, ensure_ascii=False, default=str))
        for name, process in list(self._processors):
            try:
                process(masked, ts)
            except Exception as exc:  # e.g. the [otel] extra missing, an exporter failure: said once, dropped
                self._error(f"{name} failed: {exc}")
                self._processors.remove((name, process))
                if process == self._export_span:
                    self.otlp_endpoint = None

    def add_processor(self, process: Callable[[dict[str, Any], float], None], name: str = "") -> None:
        """A hook every masked record goes to (with its time) after the file, in the writer thread:
        an exporter, a metrics counter. One that raises is reported once and dropped."""
        self._processors.append((name or getattr(process, "__name__", "a trace processor"), process))

    def _export_span(self, masked: dict[str, Any], ts: float) -> None:
        """The OTLP processor: records as spans (the exporter is made with the first record)."""
        if self._spans is None:
            self._spans = SpanBuilder(str(self.otlp_endpoint), self.service_name)
        self._spans.handle(masked, ts)

    def _error(self, message: str) -> None:
        """Keep every error; say each kind once on stderr (not once per record)."""
        self.errors.append(message)
        if not any(e.split(":")[0] == message.split(":")[0] for e in self.errors[:-1]):
            print(f"duckflow trace: {message}", file=sys.stderr)

    def _shutdown(self) -> None:
        if self._spans is not None:
            self._spans.shutdown()
            self._spans = None


class SpanBuilder:
    """Turns masked trace records into OpenTelemetry spans exported over OTLP/HTTP (protobuf).

    A span per agent run (agent_start..agent_end), per tool call (tool_start..tool_end) and
    per handoff, nested under the session's running agent; an event with `duration_ms`
    (llm_call, say) becomes a span ending at its time; other events become span events on
    the running agent (or a zero-length span). Needs the `[otel]` extra, imported here only.
    Seed 004 §3-6 names gRPC; OTLP/HTTP is used because it needs no grpcio and every
    collector accepts it (see docs/traces.md).
    """

    def __init__(self, endpoint: str, service_name: str = "duckflow") -> None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        url = endpoint.rstrip("/")
        if not url.endswith("/v1/traces"):
            url += "/v1/traces"
        self.url = url
        self.provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
        self.provider.add_span_processor(
            BatchSpanProcessor(OTLPSpanExporter(endpoint=url, timeout=5), schedule_delay_millis=200)
        )
        self.tracer = self.provider.get_tracer("duckflow.trace")
        self.agents: dict[str, list[tuple[str, Any]]] = {}
        self.open: dict[tuple[str, ...], Any] = {}

    @staticmethod
    def _attrs(record: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in record.items():
            if key in ("event", "time") or value is None:
                continue
            if not isinstance(value, str | bool | int | float):
                value = json.dumps(value, ensure_ascii=False, default=str)
            out[f"duckflow.{key}"] = value
        return out

    def handle(self, record: dict[str, Any], ts: float) -> None:
        from opentelemetry import trace as otel
        from opentelemetry.trace import Status, StatusCode

        ns = int(ts * 1e9)
        event = str(record.get("event", ""))
        session, agent = str(record.get("session", "")), str(record.get("agent", ""))
        attrs = self._attrs(record)
        stack = self.agents.setdefault(session, [])
        parent = otel.set_span_in_context(stack[-1][1]) if stack else None
        failed = bool(record.get("error")) or record.get("ok") is False or event == "error"

        def start(name: str) -> Any:
            return self.tracer.start_span(name, context=parent, start_time=ns, attributes=attrs)

        def finish(span: Any) -> None:
            span.set_attributes(attrs)
            if failed:
                span.set_status(Status(StatusCode.ERROR, str(record.get("error", ""))[:200]))
            span.end(end_time=ns)

        tool_key = (session, agent, str(record.get("tool", "")), str(record.get("call_id", "")))
        hand_key = (session, agent, "handoff", str(record.get("target", "")))
        if event == "agent_start":
            stack.append((agent, start(f"agent {agent}")))
        elif event == "agent_end":
            for i in range(len(stack) - 1, -1, -1):
                if stack[i][0] == agent:
                    finish(stack.pop(i)[1])
                    break
            else:
                finish(start(f"agent {agent}"))
        elif event in ("tool_start", "handoff_start"):
            name = f"tool {record.get('tool', '')}" if event == "tool_start" else (
                f"handoff {agent} -> {record.get('target', '')}")
            self.open[tool_key if event == "tool_start" else hand_key] = start(name)
        elif event in ("tool_end", "handoff_end"):
            span = self.open.pop(tool_key if event == "tool_end" else hand_key, None)
            if span is None:
                name = f"tool {record.get('tool', '')}" if event == "tool_end" else f"handoff {agent}"
                span = start(name)
            finish(span)
        elif isinstance(record.get("duration_ms"), int | float):
            begin = ns - int(float(record["duration_ms"]) * 1e6)
            span = self.tracer.start_span(event, context=parent, start_time=begin, attributes=attrs)
            finish(span)
        elif stack:
            stack[-1][1].add_event(event, attributes=attrs, timestamp=ns)
            if event == "error":
                stack[-1][1].set_status(Status(StatusCode.ERROR, str(record.get("message", ""))[:200]))
        else:
            finish(start(event))

    def flush(self, timeout: float) -> bool:
        return bool(self.provider.force_flush(int(timeout * 1000)))

    def shutdown(self) -> None:
        now = time.time_ns()
        for stack in self.agents.values():
            for _, span in stack:
                span.end(end_time=now)
        for span in self.open.values():
            span.end(end_time=now)
        self.agents.clear()
        self.open.clear()
        self.provider.shutdown()


class NullTrace:
    """A TraceLogger that records nothing."""

    enabled = False  # the engine checks this and builds no events at all
    path = None
    otlp_endpoint = None

    def emit(self, event: str, *, session: str = "", agent: str = "", **fields: Any) -> None:
        return None

    def callback(self, *, session: str = "", agent: str = "") -> Callable[[str, dict[str, Any]], None]:
        return lambda name, fields: None

    def flush(self, timeout: float = 10.0) -> bool:
        return True

    def close(self, timeout: float = 10.0) -> None:
        return None

    def __enter__(self) -> NullTrace:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def default_trace_path() -> Path:
    """`<DUCKFLOW_HOME>/traces/<UTC date>.jsonl`."""
    from duckflow.paths import duckflow_home

    return duckflow_home() / "traces" / f"{datetime.now(UTC):%Y-%m-%d}.jsonl"


def trace_from_config(config: TraceConfig | None = None) -> TraceLogger | NullTrace:
    """The trace the configuration asks for: NullTrace when `trace.enabled` is false."""
    if config is None:
        from duckflow.config import load_config

        config = load_config().trace
    if not config.enabled:
        return NullTrace()
    path = Path(config.path).expanduser() if config.path else default_trace_path()
    return TraceLogger(path, otlp_endpoint=config.otlp_endpoint, service_name=config.service_name)
