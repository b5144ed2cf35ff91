"""Image inputs for the roles: load, audit, and keep channel downloads for a retention period (seed 003 §7.3, §13.5).

Images are typed by their content (`imagetype`: magic bytes and the header's pixel size, never
the file name) and capped in bytes and pixels. `ImageInbox.save(data, suffix)` stores a channel's download (e.g. a LINE image) in
`<DUCKFLOW_HOME>/media/`; files are not deleted at once but after `retention_s` (default 24 h),
by `cleanup()` (run on every save and when images are prepared). `prepare_images(paths)` turns
files into `ImagePart`s and writes one audit record per image *before the request*
(`LLM image audit before request`: source_path, url_type, image_url summary and length,
local_exists_before, local_size_before_bytes, media_type, width, height, included, drop_reason);
`audit_after_timeout()`
writes `LLM image audit after timeout` (local_exists_after_timeout,
local_size_after_timeout_bytes). Records go to the `duckflow.provider.http` logger and to
`<DUCKFLOW_HOME>/events/image_audit.jsonl`.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from duckflow.llm.types import ImagePart

ALLOWED = {"image/png", "image/jpeg", "image/gif", "image/webp"}
MAX_IMAGE_BYTES = 5_000_000
_log = logging.getLogger("duckflow.provider.http")


def _home() -> Path:
    from duckflow.paths import duckflow_home

    return duckflow_home()


def audit_path() -> Path:
    return _home() / "events" / "image_audit.jsonl"


def _write(message: str, record: dict[str, Any], path: Path | None = None) -> dict[str, Any]:
    record = {"ts": datetime.now(UTC).isoformat(timespec="milliseconds"), "category": "provider.http",
              "message": message, **record}
    _log.info("%s %s", message, json.dumps(record, ensure_ascii=False))
    from duckflow.store.jsonlog import JsonlFile

    JsonlFile(path or audit_path()).write(record)  # the one JSONL writer (rotated past 20 MB)
    return record


class ImageInbox:
    """Where channel downloads wait; removed only after the retention period."""

    def __init__(self, folder: str | Path | None = None, *, retention_s: float = 24 * 3600,
                 clock: Any = time.time) -> None:
        self.folder = Path(folder) if folder is not None else _home() / "media"
        self.retention_s = retention_s
        self.clock = clock

    def save(self, data: bytes, suffix: str = ".png") -> Path:
        self.cleanup()
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{uuid.uuid4().hex}{suffix if suffix.startswith('.') else '.' + suffix}"
        path.write_bytes(data)
        return path

    def cleanup(self) -> list[Path]:
        """Delete the files older than the retention period; returns what was removed."""
        removed: list[Path] = []
        if not self.folder.is_dir():
            return removed
        cutoff = self.clock() - self.retention_s
        for f in self.folder.iterdir():
            try:
                if f.is_file() and not f.is_symlink() and f.stat().st_mtime < cutoff:
                    f.unlink()
                    removed.append(f)
            except OSError:
                continue
        return removed


def prepare_images(paths: list[str | Path], *, audit: Path | None = None) -> tuple[list[ImagePart], list[dict[str, Any]]]:
    """ImageParts for the files that can be sent, and the before-request audit record of every file."""
    parts: list[ImagePart] = []
    records: list[dict[str, Any]] = []
    from duckflow.orchestra.imagetype import image_problem

    for raw in paths:
        path = Path(raw)
        exists = path.is_file()
        size = path.stat().st_size if exists else None
        media: str | None = None
        pixels: tuple[int, int] | None = None
        drop = None
        data = b""
        if not exists:
            drop = "the file does not exist"
        elif size is not None and size > MAX_IMAGE_BYTES:
            drop = f"{size} bytes is over the {MAX_IMAGE_BYTES} byte limit"
        else:
            try:
                data = path.read_bytes()
            except OSError as exc:
                drop = f"it cannot be read ({exc.strerror or exc})"
            else:
                media, pixels, drop = image_problem(data)
        uri = ""
        if drop is None and media is not None:
            part = ImagePart(data, media, str(path))
            parts.append(part)
            uri = part.data_uri()
        records.append(_write("LLM image audit before request", {
            "source_path": str(path), "url_type": "data_uri" if uri else "none",
            "image_url": (uri[:48] + "…") if uri else "", "image_url_length": len(uri),
            "local_exists_before": exists, "local_size_before_bytes": size,
            "media_type": media, "width": pixels[0] if pixels else None, "height": pixels[1] if pixels else None,
            "included": drop is None, "drop_reason": drop}, audit))
    return parts, records


def audit_after_timeout(parts: list[ImagePart], *, audit: Path | None = None) -> list[dict[str, Any]]:
    out = []
    for part in parts:
        path = Path(part.source_path)
        exists = path.is_file()
        out.append(_write("LLM image audit after timeout", {
            "source_path": part.source_path, "local_exists_after_timeout": exists,
            "local_size_after_timeout_bytes": path.stat().st_size if exists else None}, audit))
    return out
