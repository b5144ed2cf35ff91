"""`POST /v1/images`: an image uploaded as the raw body, typed by its content, kept for a day; messages name it by id.

The page (or any client) sends the file's bytes (`Content-Type: image/png` or any: the content
decides), gets `{"image": ID, "media_type", "width", "height"}`, and sends `{"text", "images":
[ID]}` to `/v1/sessions/{id}/messages`. The bytes are checked as `prepare_images` checks a
LINE download (magic bytes, ≤ MAX_IMAGE_BYTES, pixel caps) and stored in the image inbox
(`<DUCKFLOW_HOME>/media`, removed after its retention period). An id is only a file name of
that folder (32 hex characters and the type's suffix), so a message cannot name any other file.
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, HTTPException, Request

from duckflow.orchestra.images import MAX_IMAGE_BYTES

UPLOAD_PATH = "/v1/images"
MAX_IMAGES = 4  # per message
_ID = re.compile(r"^[0-9a-f]{32}\.(png|jpg|gif|webp)$")
_SUFFIX = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}


def image_paths(ids: list[str]) -> list[str]:
    """The stored files of uploaded image ids; ValueError (one line) for an id that is not one."""
    if not ids:
        return []
    from duckflow.orchestra.images import ImageInbox

    folder = ImageInbox().folder
    paths = []
    for given in ids:
        if not isinstance(given, str) or not _ID.match(given) or not (folder / given).is_file():
            raise ValueError(f"no uploaded image {str(given)[:60]!r}: upload it first with POST {UPLOAD_PATH} "
                             "(kept for a day)")
        paths.append(str(folder / given))
    return paths


def uploads_router() -> APIRouter:
    r = APIRouter()

    @r.post("/images", status_code=201)
    async def upload(request: Request) -> dict[str, Any]:
        from duckflow.orchestra.images import ImageInbox
        from duckflow.orchestra.imagetype import image_problem

        data = await request.body()
        if len(data) > MAX_IMAGE_BYTES:
            raise HTTPException(413, f"the image is larger than {MAX_IMAGE_BYTES} bytes")
        if not data:
            raise HTTPException(400, "send the image's bytes as the body")
        media, size, why = image_problem(data)
        if why is not None or media is None or size is None:
            raise HTTPException(415 if media is None else 422, f"this image is not accepted: {why}")
        path = ImageInbox().save(data, _SUFFIX[media])
        return {"image": path.name, "media_type": media, "width": size[0], "height": size[1]}

    return r
