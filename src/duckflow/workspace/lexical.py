"""Lexical path checks: turn a path string into components under the workspace root, or refuse.

Nothing here touches the filesystem. The filesystem walk (symlinks, special files, races) is in
`guard.py`. What this module refuses, and why, is listed in docs/workspace.md.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from dataclasses import dataclass

NAME_MAX = 255  # bytes per component on Linux filesystems (ext4, xfs, btrfs, tmpfs)
PATH_MAX = 4095  # bytes for a whole path, without the terminating NUL

_DRIVE = re.compile(r"^[A-Za-z]:(/|$)")
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:/")
# Characters that look like '/' or '\\' but that NFKC leaves alone (division slash, fraction
# slash, big solidus, set minus, small reverse solidus ...): no real name needs them.
_SLASH_LOOKALIKES = frozenset("\u2215\u2044\u29f8\u29f5\u29f9\u2216\ufe68\u2571\u2572\u27cb\u27cd\u1735")
_DOTS_AND_SPACES = re.compile(r"^[. ]*\s[. ]*$")
_SHELL_VAR = re.compile(r"^\$[A-Za-z_{(]")


@dataclass(frozen=True)
class Refusal:
    """Why a path was refused: a stable `code` and a sentence for a person."""

    code: str
    reason: str


@dataclass(frozen=True)
class Lexical:
    """A path split into components relative to the root; `want_dir` when it ended with '/'."""

    parts: tuple[str, ...]
    want_dir: bool


def _char_refusal(raw: str) -> Refusal | None:
    if "\x00" in raw:
        return Refusal("nul_byte", "the path contains a NUL byte")
    for ch in raw:
        cat = unicodedata.category(ch)
        if cat == "Cc":
            return Refusal("control_char", f"the path contains the control character U+{ord(ch):04X}")
        if cat == "Cs":
            return Refusal("encoding", "the path is not valid UTF-8 (lone surrogate)")
        if cat in ("Cf", "Zl", "Zp"):
            return Refusal(
                "unicode_format",
                f"the path contains the invisible formatting character U+{ord(ch):04X} "
                "(bidi override, zero-width or line separator)",
            )
    return None


def _normalize(raw: str, roots: tuple[str, ...]) -> Lexical | Refusal:
    if "\\" in raw:
        return Refusal("backslash", "backslashes are not path separators here; use '/'")
    if raw.startswith("~"):
        return Refusal("home", "'~' (home directory) paths are outside the workspace")
    if _DRIVE.match(raw):
        return Refusal("drive_letter", "Windows drive paths are outside the workspace")
    if _URL.match(raw):
        return Refusal("url", "URLs (file://, http://, ...) are not workspace paths")
    want_dir = raw.endswith("/") or raw.endswith("/.")
    if raw.startswith("/"):
        norm = posixpath.normpath(raw)
        if norm.startswith("//"):
            norm = "/" + norm.lstrip("/")
        rel: str | None = None
        for root in roots:
            if norm == root:
                rel = ""
                break
            if norm.startswith(root.rstrip("/") + "/"):
                rel = norm[len(root.rstrip("/")) + 1 :]
                break
        if rel is None:
            return Refusal("outside_workspace", f"'{norm}' is outside the workspace")
        raw_rel = rel
    else:
        raw_rel = raw
    stack: list[str] = []
    for part in raw_rel.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not stack:
                return Refusal("dotdot_escape", "'..' leads out of the workspace")
            stack.pop()
            continue
        if any(ch in _SLASH_LOOKALIKES for ch in part):
            return Refusal("unicode_lookalike", f"'{part}' contains a character that looks like "
                           "a path separator")
        if "." in part and _DOTS_AND_SPACES.match(part):
            return Refusal("dotdot_escape", f"'{part}' is '.' or '..' padded with spaces, "
                           "which Windows tools read as '..'")
        if _SHELL_VAR.match(part):
            return Refusal(
                "shell_expansion",
                f"'{part}' looks like a shell variable; tools never expand variables",
            )
        stack.append(part)
    return Lexical(tuple(stack), want_dir)


def split_path(raw: str, roots: tuple[str, ...]) -> Lexical | Refusal:
    """Check `raw` without touching the disk; `roots` are the root's absolute spellings.

    Absolute paths are accepted only when they lie (lexically) under one of `roots`.
    """
    if not raw or not raw.strip():
        return Refusal("empty", "the path is empty")
    bad = _char_refusal(raw)
    if bad is not None:
        return bad
    try:
        size = len(raw.encode("utf-8"))
    except UnicodeEncodeError:
        return Refusal("encoding", "the path is not valid UTF-8")
    if size > PATH_MAX:
        return Refusal("path_too_long", f"the path is {size} bytes; the limit is {PATH_MAX}")
    result = _normalize(raw, roots)
    if isinstance(result, Refusal):
        return result
    for part in result.parts:
        if len(part.encode("utf-8")) > NAME_MAX:
            return Refusal("name_too_long", f"a path component is longer than {NAME_MAX} bytes")
    # Look-alike characters (fullwidth dots and slashes, ...) are plain name characters to
    # the kernel, but a tool, shell or archive that normalizes Unicode later would see an
    # escape. Refuse a path whose NFKC form escapes.
    nfkc = unicodedata.normalize("NFKC", raw)
    if nfkc != raw:
        other = _normalize(nfkc, roots)
        if isinstance(other, Refusal):
            return Refusal(
                "unicode_lookalike",
                f"the path uses look-alike Unicode characters; normalized, it is refused: {other.reason}",
            )
    return result


def name_key(name: str) -> str:
    """A component as a case-insensitive filesystem (or Windows) would compare it."""
    return unicodedata.normalize("NFKC", name).casefold().rstrip(". ")


def dangerous_suffix(name: str, extensions: list[str]) -> str | None:
    """The dangerous extension `name` ends with (case-, width- and trailing-dot-insensitive)."""
    keys = {name_key(name), name_key(name.split(":", 1)[0])}
    for ext in extensions:
        e = ext.casefold() if ext.startswith(".") else "." + ext.casefold()
        if any(k.endswith(e) for k in keys):
            return ext
    return None
