"""What an image file is, by its content: the type from its magic bytes and its size in pixels from its header.

A file's name says nothing (a LINE download is saved as `.img`; a `.png` can be anything), so
the type comes from the first bytes — PNG, JPEG, GIF or WebP, the types every vision provider
takes — and the width and height from the header, without decoding a pixel (no imaging
library): a small file that claims 100,000 × 100,000 pixels is refused before any model gets it.
"""

from __future__ import annotations

import struct

MAX_SIDE = 8000  # pixels on the longer side (Anthropic's limit; OpenAI scales larger ones down)
MAX_PIXELS = 40_000_000

_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def media_type(data: bytes) -> str | None:
    """`image/png`, `image/jpeg`, `image/gif` or `image/webp` from the magic bytes; None otherwise."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def dimensions(data: bytes, media: str) -> tuple[int, int] | None:
    """(width, height) read from the header of an image of type `media`; None when it cannot be read."""
    try:
        if media == "image/png":
            if data[12:16] != b"IHDR":
                return None
            w, h = struct.unpack(">II", data[16:24])
            return int(w), int(h)
        if media == "image/gif":
            w, h = struct.unpack("<HH", data[6:10])
            return int(w), int(h)
        if media == "image/jpeg":
            return _jpeg(data)
        if media == "image/webp":
            return _webp(data)
    except struct.error:  # the header is cut short
        return None
    return None


def _jpeg(data: bytes) -> tuple[int, int] | None:
    """The frame header's size: segments are walked by their lengths up to the first SOF marker."""
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in _SOF:
            h, w = struct.unpack(">HH", data[i + 5:i + 9])
            return int(w), int(h)
        if 0xD0 <= marker <= 0xD9 or marker == 0x01:  # markers without a length
            i += 2
            continue
        (length,) = struct.unpack(">H", data[i + 2:i + 4])
        if length < 2:
            return None
        i += 2 + length
    return None


def _webp(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 " and data[23:26] == b"\x9d\x01\x2a":  # lossy: the key frame's start code
        w, h = struct.unpack("<HH", data[26:30])
        return int(w) & 0x3FFF, int(h) & 0x3FFF
    if chunk == b"VP8L" and data[20:21] == b"\x2f":  # lossless: 14 bits each, minus one
        (bits,) = struct.unpack("<I", data[21:25])
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":  # extended: the canvas, 24 bits each, minus one
        w = int.from_bytes(data[24:27], "little") + 1
        h = int.from_bytes(data[27:30], "little") + 1
        return w, h
    return None


def image_problem(data: bytes) -> tuple[str | None, tuple[int, int] | None, str | None]:
    """(media type, (width, height), why it is not sent) for an image's bytes; why is None when it is fine."""
    media = media_type(data)
    if media is None:
        return None, None, "it is not a PNG, JPEG, GIF or WebP image (judged by its content)"
    size = dimensions(data, media)
    if size is None or min(size) < 1:
        return media, None, f"its {media.split('/')[1].upper()} header does not say its size (a damaged file?)"
    w, h = size
    if max(w, h) > MAX_SIDE or w * h > MAX_PIXELS:
        return media, size, f"{w}×{h} pixels is over the limit ({MAX_SIDE} on a side, {MAX_PIXELS // 1_000_000} M in all)"
    return media, size, None
