"""The orchestration event log (seed 003 §7): fixed event types, masked JSONL, filtered reading.

    log = EventLog()                         # routing.events_path or <DUCKFLOW_HOME>/events/events.jsonl
    log.emit("router.decision", "s1", initial_route="CODE", ...)
    [e for e in log.read(session="s1", type="loop.stop")]

Every record carries `ts`, `type`, `session_id` and the §7.2 minimum fields it knows
(initial_route, final_route, classifier_route, classifier_confidence, worker_calls,
needs_next_loop, risk, fit, reroute_used, stop_reason, error_reason); approval events add the
§7.3 fields (job_id, approval_status, approval_requested_at, approval_decided_at, approver,
coder_output). Text values (all but the log's own timestamp) are masked by the sanitizer
before they are written (§7).

Masking is per value, as before, but a short value already masked by this log is taken from a
bounded memo (route names, rule reasons, declarations and stop reasons repeat on every message;
a full sanitizer scan costs ~50 µs even for `CODE`, and an event carries a dozen strings).
The memo maps a value to exactly what the sanitizer returned for it, so what is written is
unchanged; long values (a person's text) are scanned every time and never kept.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from duckflow.store.jsonlog import JsonlFile

EVENT_TYPES = (
    "router.decision", "classifier.error", "worker.success", "worker.fail", "route.override", "loop.stop",
    "final.route", "approval.requested", "approval.granted", "approval.denied", "approval.auto_approved",
    "coder.plan_generated",
)
MIN_FIELDS = ("initial_route", "final_route", "classifier_route", "classifier_confidence", "worker_calls",
              "needs_next_loop", "risk", "fit", "reroute_used", "stop_reason", "error_reason")
MAX_BYTES = 20 * 1024 * 1024  # the file is rotated past this (routing.events_max_mb)
KEEP = 3  # rotated files kept: events.jsonl.1 (newest) .. events.jsonl.3 (routing.events_keep)
MEMO_MAX_LEN = 256  # values longer than this are scanned every time
MEMO_SIZE = 4096  # distinct short values kept (cleared when full: ~1 MB at most)
APPROVAL_FIELDS = ("job_id", "approval_status", "approval_requested_at", "approval_decided_at", "approver",
                   "coder_output")


def default_events_path() -> Path:
    from duckflow.paths import duckflow_home

    return duckflow_home() / "events" / "events.jsonl"


def _mask(value: Any, mask: Any) -> Any:
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, dict):
        return {k: _mask(v, mask) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_mask(v, mask) for v in value]
    return value


class EventLog:
    """Appends events as masked JSON lines; `read()` filters by session and type.

    Past `max_bytes` the file is rotated as logging's RotatingFileHandler does: events.jsonl
    becomes events.jsonl.1, .1 becomes .2, and so on; the oldest beyond `keep` is deleted, so
    a long-running server's log stays within ~(keep + 1) x max_bytes. `read()` reads the kept
    files oldest first, then the current one.
    """

    def __init__(self, path: str | Path | None = None, *, max_bytes: int = MAX_BYTES, keep: int = KEEP) -> None:
        self.path = Path(path).expanduser() if path else default_events_path()
        self.file = JsonlFile(self.path, max_bytes=max_bytes, keep=keep)  # the one JSONL writer
        self._mask: Any = None
        self._memo: dict[str, str] = {}

    @classmethod
    def from_settings(cls, routing: Any) -> EventLog:
        """The log `routing` (RoutingConfig) names: its path, size limit and kept files."""
        return cls(routing.events_path, max_bytes=int(routing.events_max_mb * 1024 * 1024), keep=routing.events_keep)

    def _masked(self, value: str) -> str:
        """The sanitizer's masking of `value`, memoised for short values (see the module docstring)."""
        if len(value) > MEMO_MAX_LEN:
            return str(self._mask(value))
        hit = self._memo.get(value)
        if hit is None:
            hit = str(self._mask(value))
            if len(self._memo) >= MEMO_SIZE:
                self._memo.clear()
            self._memo[value] = hit
        return hit

    def emit(self, type: str, session_id: str = "", **fields: Any) -> dict[str, Any]:
        if type not in EVENT_TYPES:
            raise ValueError(f"unknown event type {type!r}")
        if self._mask is None:
            from duckflow.security.sanitizer import mask_text

            self._mask = mask_text
        record: dict[str, Any] = {"ts": datetime.now(UTC).isoformat(timespec="milliseconds"), "type": type,
                                  "session_id": session_id}
        wanted = MIN_FIELDS if not type.startswith(("approval.", "coder.")) else MIN_FIELDS + APPROVAL_FIELDS
        for key in wanted:
            record[key] = fields.pop(key, None)
        record.update(fields)
        # every value but our own timestamp through the sanitizer (the memo's get/set/clear are atomic)
        record = {k: v if k == "ts" else _mask(v, self._masked) for k, v in record.items()}
        self._append(json.dumps(record, ensure_ascii=False, default=str), record)
        return record

    def _append(self, line: str, record: dict[str, Any]) -> None:
        """One masked record, as a line of the file (a PostgreSQL log stores it as a row)."""
        self.file.append([line])

    @property
    def max_bytes(self) -> int:
        return self.file.max_bytes

    @property
    def keep(self) -> int:
        return self.file.keep

    def files(self) -> list[Path]:
        """The log's files that exist, oldest first (rotated ones, then the current one)."""
        return self.file.files()

    def read(self, *, session: str | None = None, type: str | None = None) -> Iterator[dict[str, Any]]:
        """Events in order, the rotated files first; broken lines are skipped (a crash may cut
        the last one)."""
        prefix = type.rstrip("*") if type is not None and type.endswith("*") else None
        for record in self.file.read():
            if session is not None and record.get("session_id") != session:
                continue
            kind = str(record.get("type", ""))
            if type is not None and kind != type and not (prefix is not None and kind.startswith(prefix)):
                continue
            yield record
