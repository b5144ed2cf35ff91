"""The one JSONL writer every log of Duckflow appends through: batched, rotating, readable in order.

The trace, the orchestra's event log, the gate's audit copy and the image audit each keep
their own file and their own masking (each masks before it writes), and all of them write
through a `JsonlFile`:

- `append(lines)` writes a batch with one `write` on an O_APPEND descriptor (lines of
  concurrent writers never interleave), creating the folder again if it was removed, the
  file with mode 0600 (a log holds masked text, still a person's own);
- past `max_bytes` the file is rotated as logging's RotatingFileHandler does (`x.jsonl` →
  `x.jsonl.1` → `.2` …, the oldest beyond `keep` deleted), so a long-running server's logs
  stay within about (keep + 1) × max_bytes;
- `read()` yields the records of the kept files oldest first, then the current one, skipping
  a line a crash cut (inside a multi-byte character too).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

MAX_BYTES = 20 * 1024 * 1024
KEEP = 3


class JsonlFile:
    def __init__(self, path: str | Path, *, max_bytes: int = MAX_BYTES, keep: int = KEEP) -> None:
        self.path = Path(path).expanduser()
        self.max_bytes = max(1, int(max_bytes))
        self.keep = max(0, int(keep))
        self._lock = threading.Lock()

    def append(self, lines: Iterable[str]) -> int:
        """Append the lines (each one JSON object, without its newline); returns how many."""
        batch = [line + "\n" for line in lines]
        if not batch:
            return 0
        data = "".join(batch).encode("utf-8")
        with self._lock:
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            except FileNotFoundError:  # no folder yet, or it was removed meanwhile: make it again
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, data)
                full = os.fstat(fd).st_size > self.max_bytes
            finally:
                os.close(fd)
            if full:
                self._rotate()
        return len(batch)

    def write(self, record: dict[str, Any], **dumps: Any) -> None:
        """One record (already masked by its log) as a line."""
        self.append([json.dumps(record, ensure_ascii=False, default=str, **dumps)])

    def _rotated(self, n: int) -> Path:
        return self.path.with_name(f"{self.path.name}.{n}")

    def _rotate(self) -> None:
        """x.jsonl -> .1 -> .2 ... (under the lock; another process rotating at the same time can
        at worst rotate once more: every rename is atomic, no line is split)."""
        try:
            if self.keep == 0:
                self.path.unlink()
                return
            self._rotated(self.keep).unlink(missing_ok=True)
            for n in range(self.keep - 1, 0, -1):
                if self._rotated(n).exists():
                    self._rotated(n).rename(self._rotated(n + 1))
            self.path.rename(self._rotated(1))
        except FileNotFoundError:  # another process rotated it first
            pass

    def files(self) -> list[Path]:
        """The files that exist, oldest first (rotated ones, then the current one)."""
        kept = [self._rotated(n) for n in range(self.keep, 0, -1)]
        return [p for p in [*kept, self.path] if p.exists()]

    def read(self) -> Iterator[dict[str, Any]]:
        """Every record in order; broken lines (a crash may cut the last one) are skipped."""
        for path in self.files():
            try:
                fh = path.open(encoding="utf-8", errors="replace")
            except FileNotFoundError:  # rotated away meanwhile
                continue
            with fh:
                for line in fh:
                    try:
                        record = json.loads(line)
                    except json.JSONDecodeError:
                        continue
                    if isinstance(record, dict):
                        yield record
