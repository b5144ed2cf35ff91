"""An ACP prompt's content blocks as the one message the front door takes: text, and the files the person pointed at.

Text blocks are the message. A file the person attached (an embedded `resource`) or linked
(`resource_link`) is named by its path inside the workspace, with its text as the editor
holds it — read through the client's `fs/read_text_file` when the client offers it (unsaved
changes included), else from disk — cut to `FILE_CHARS` with a note, so a small model's
prompt stays small. Images and audio are not taken (the agent does not offer them).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from duckflow.safe_read import inside, read_inside

log = logging.getLogger("duckflow.acp")
FILE_CHARS = 4000  # of one attached file's text in the message
Reader = Callable[[str], Awaitable[str]] | None


def _path(uri: str) -> str:
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme in ("file", "") else ""


def _shown(root: Path, path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(root))
    except ValueError:
        return path


def _cut(text: str) -> str:
    if len(text) <= FILE_CHARS:
        return text
    return text[:FILE_CHARS] + f"\n… ({len(text) - FILE_CHARS} more characters not shown)"


async def _file(root: Path, uri: str, reader: Reader) -> str:
    """The text of a linked file inside the workspace ('' when it is outside or unreadable)."""
    path = _path(uri)
    target = inside(root, path) if path else None
    if target is None:
        return ""
    if reader is not None:
        try:
            return await reader(path)
        except Exception as exc:  # noqa: BLE001 - the editor could not give it: read it from disk
            log.info("fs/read_text_file failed for %s: %s", path, exc)
    try:  # capped, and no link inside the workspace followed (safe_read.py)
        return read_inside(root, target.relative_to(root)).decode("utf-8", errors="replace")
    except OSError:  # UnsafeFile is one
        return ""


async def prompt_text(blocks: list[Any], workspace: str, reader: Reader = None) -> str:
    root = Path(workspace).resolve()
    said: list[str] = []
    files: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", "")
        if kind == "text":
            said.append(str(block.text))
        elif kind == "resource":
            res = block.resource
            text = getattr(res, "text", None)
            name = _shown(root, _path(str(res.uri)) or str(res.uri))
            if isinstance(text, str):
                files.append(f"{name}:\n```\n{_cut(text)}\n```")
        elif kind == "resource_link":
            name = _shown(root, _path(str(block.uri)) or str(block.uri))
            text = await _file(root, str(block.uri), reader)
            files.append(f"{name}:\n```\n{_cut(text)}\n```" if text else f"(the person points at {name})")
    message = "\n".join(s for s in said if s)
    if files:
        message += "\n\nFiles the person attached:\n" + "\n\n".join(files)
    return message
