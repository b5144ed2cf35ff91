"""The gate's audit log: every request and decision, masked, in SQLite and an append-only JSONL file."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from duckflow.gate.request import iso
from duckflow.gate.store import GateStore

# Event names are `approval.<what>` so one prefix filters every decision from the log (seed 003
# §7.1), plus the auto-approve switch and expiry.
EVENTS = (
    "approval.requested",
    "approval.granted",
    "approval.denied",
    "approval.auto_approved",
    "approval.refused",
    "approval.expired",
    "autoapprove.on",
    "autoapprove.off",
)

WITHHELD = "[withheld: sanitizer unavailable]"

# Free text that may carry secrets; structural fields (kind, risk, status, ids) are kept as-is.
MASKED_FIELDS = frozenset({"intent", "rationale", "impact", "alternatives", "diff_preview",
                           "summary", "command", "note", "affected", "paths", "scope"})


def _masker() -> Callable[[str], str]:
    """The security sanitizer's `mask_text`, imported lazily.

    When it cannot be imported, text is withheld rather than written unmasked (fail closed).
    """
    try:
        from duckflow.security.sanitizer import mask_text
    except ImportError:
        return lambda _text: WITHHELD
    return mask_text


def mask_value(value: Any, mask: Callable[[str], str]) -> Any:
    """Mask every string inside a JSON-like value (dict keys are kept as they are)."""
    if isinstance(value, str):
        return mask(value) if value else value
    if isinstance(value, dict):
        return {k: mask_value(v, mask) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [mask_value(v, mask) for v in value]
    return value


@dataclass(frozen=True)
class AuditEntry:
    at: float
    event: str
    job_id: str | None
    by: str
    data: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"at": iso(self.at), "ts": self.at, "event": self.event, "job_id": self.job_id,
                "by": self.by, **self.data}


class AuditLog:
    """Appends masked entries to the `audit` table and to a JSONL file (one object per line)."""

    def __init__(self, store: GateStore, path: str | Path) -> None:
        from duckflow.store.jsonlog import JsonlFile

        self.store = store
        self.path = Path(path)
        self.file = JsonlFile(self.path)  # the one JSONL writer (rotated; the table keeps everything)
        self._mask: Callable[[str], str] | None = None

    def entry(self, at: float, event: str, job_id: str | None, by: str, data: dict[str, Any]) -> AuditEntry:
        if self._mask is None:
            self._mask = _masker()
        mask = self._mask
        masked = {k: mask_value(v, mask) if k in MASKED_FIELDS else v for k, v in data.items()}
        return AuditEntry(at=at, event=event, job_id=job_id, by=by, data=masked)

    def store_row(self, c: sqlite3.Connection, e: AuditEntry) -> None:
        GateStore.insert_audit(c, e.at, e.event, e.job_id, e.by, e.data)

    def append_file(self, e: AuditEntry) -> None:
        """One line per entry (O_APPEND: concurrent writers do not interleave)."""
        self.file.write(e.to_dict(), sort_keys=True)

    def record(self, at: float, event: str, job_id: str | None, by: str, data: dict[str, Any]) -> AuditEntry:
        """Record one entry in its own transaction, then append it to the file."""
        e = self.entry(at, event, job_id, by, data)
        with self.store.tx() as c:
            self.store_row(c, e)
        self.append_file(e)
        return e

    def read_file(self) -> list[dict[str, Any]]:
        """The JSONL file's entries, the rotated files first (for tests and `duckflow approvals show`)."""
        return list(self.file.read())
