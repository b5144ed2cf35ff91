"""Reads the server's JSONL trace (already masked when written) for `GET /v1/traces`."""

from __future__ import annotations

import json
from collections import deque
from typing import Any


def read_trace(runner: Any, session: str | None, limit: int) -> list[dict[str, Any]]:
    """The last `limit` records of the trace file the runner writes, optionally of one session."""
    trace = runner._shared_parts()["trace"]
    flush = getattr(trace, "flush", None)
    if flush is not None:
        flush(2.0)
    path = getattr(trace, "path", None)
    if path is None or not path.exists():
        return []
    out: deque[dict[str, Any]] = deque(maxlen=limit)
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and (session is None or record.get("session") == session):
                out.append(record)
    return list(out)
