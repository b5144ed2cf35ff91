"""Reads the server's JSONL trace (already masked when written) for `GET /v1/traces`: this workspace's records only.

The trace file lives in DUCKFLOW_HOME and is shared by every workspace's CLI runs and servers;
a record is shown only when its session belongs to this server's workspace (the same check
as every session path, `SessionRunner.belongs_here`), so one workspace's server never shows
what was read or run in another.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any


def read_trace(runner: Any, session: str | None, limit: int) -> list[dict[str, Any]]:
    """The last `limit` records of this workspace's sessions in the runner's trace, optionally of one session."""
    trace = runner._shared_parts()["trace"]
    flush = getattr(trace, "flush", None)
    if flush is not None:
        flush(2.0)
    path = getattr(trace, "path", None)
    if path is None or not path.exists():
        return []
    here: dict[str, bool] = {}

    def mine(sid: Any) -> bool:
        if not isinstance(sid, str) or not sid:
            return False  # a record of no session cannot be placed in a workspace
        if sid not in here:
            here[sid] = runner.exists(sid) and runner.belongs_here(sid)
        return here[sid]

    out: deque[dict[str, Any]] = deque(maxlen=limit)
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if not isinstance(record, dict):
                continue
            sid = record.get("session")
            if (session is None or sid == session) and mine(sid):
                out.append(record)
    return list(out)
