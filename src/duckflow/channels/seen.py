"""Webhook event ids already taken, kept in the server's SQLite state so a replay after a restart is refused.

A chat platform redelivers an event it thinks was missed, and anyone who captured a signed
request can send it again: the signature still holds. An id is remembered for `keep_s` (longer
than the age past which the webhook refuses an event by its signed timestamp, so an id is
never forgotten while its event could still be taken).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Protocol

from duckflow.store.sqlite import connect


class Seen(Protocol):
    """What the webhooks need: this one (one process) or PgSeenEvents (several, channels/shared)."""

    def first(self, event_id: str, now: float | None = None) -> bool: ...

    def close(self) -> None: ...


class SeenEvents:
    def __init__(self, path: str | Path, *, keep_s: float = 24 * 3600) -> None:
        self.keep_s = keep_s
        self._conn = connect(path)
        self._conn.execute("CREATE TABLE IF NOT EXISTS seen_events (event_id TEXT PRIMARY KEY, "
                           "seen REAL NOT NULL)")
        self._conn.commit()
        self._lock = threading.Lock()
        self._pruned = 0.0

    def first(self, event_id: str, now: float | None = None) -> bool:
        """True (and remembered) when `event_id` was never seen; False for a repeat."""
        at = time.time() if now is None else now
        with self._lock:
            if at - self._pruned > 600:  # drop what is past keeping, at most every ten minutes
                self._conn.execute("DELETE FROM seen_events WHERE seen < ?", (at - self.keep_s,))
                self._pruned = at
            cur = self._conn.execute("INSERT OR IGNORE INTO seen_events VALUES (?, ?)", (event_id, at))
            self._conn.commit()
            return cur.rowcount == 1

    def close(self) -> None:
        with self._lock:
            self._conn.close()
