"""Talks to the LINE Messaging API over HTTPS with httpx: reply, push and message content.

Endpoints and limits from the LINE Messaging API reference: `POST /v2/bot/message/reply`
(a reply token is single-use and short-lived; we use it within REPLY_WINDOW_S, else push),
`POST /v2/bot/message/push`, `GET /v2/bot/message/{id}/content` on the data host, text
messages up to 5000 characters. httpx (a core dependency) rather than line-bot-sdk: the SDK's
content API has its host fixed, so it could not be pointed at a local test server.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

LINE_TEXT_LIMIT = 5000
REPLY_WINDOW_S = 50.0
MAX_IMAGE_BYTES = 10 * 1024 * 1024
KEEP_IMAGES_S = 24 * 3600
IMAGE_PREFIX = "duckflow-line-"
API = "https://api.line.me"
DATA_API = "https://api-data.line.me"


@dataclass
class LineTarget:
    to: str
    reply_token: str
    received_at: float
    replied: bool = False

    def reply_usable(self) -> bool:
        return bool(self.reply_token) and not self.replied and time.monotonic() - self.received_at < REPLY_WINDOW_S


def approval_message(approval: dict[str, Any]) -> dict[str, Any]:
    """A buttons template: the job's intent and Approve / Deny postbacks."""
    from duckflow.channels.actionwords import headline

    req = approval.get("request") or {}
    job_id = str(approval.get("job_id", ""))
    said = headline(req, approval.get("call"))
    text = f"Approve? {said} (risk {req.get('risk', '?')})"
    return {
        "type": "template", "altText": f"Approval needed: {said}"[:400],
        "template": {"type": "buttons", "text": text[:160], "actions": [
            {"type": "postback", "label": "Approve", "data": f"duckflow:grant:{job_id}"},
            {"type": "postback", "label": "Deny", "data": f"duckflow:deny:{job_id}"},
        ]},
    }


def approval_text(approval: dict[str, Any]) -> str:
    from duckflow.channels.actionwords import card, card_text

    parts = card(approval.get("request") or {}, approval.get("call"), approval.get("job_id"))
    return card_text(parts)[:3500]


class LineClient:
    def __init__(self, access_token: str, api_url: str | None = None, data_url: str | None = None,
                 timeout: float = 15.0) -> None:
        self.api = (api_url or API).rstrip("/")
        self.data = (data_url or DATA_API).rstrip("/")
        self._http = httpx.AsyncClient(timeout=timeout, headers={"Authorization": f"Bearer {access_token}"})

    async def send(self, target: LineTarget, part: str, approval: dict[str, Any] | None) -> None:
        messages: list[dict[str, Any]] = []
        if part:
            messages.append({"type": "text", "text": part[:LINE_TEXT_LIMIT]})
        if approval is not None:
            messages.append({"type": "text", "text": approval_text(approval)[:LINE_TEXT_LIMIT]})
            messages.append(approval_message(approval))
        if not messages:
            return
        if target.reply_usable():
            target.replied = True
            resp = await self._http.post(f"{self.api}/v2/bot/message/reply",
                                         json={"replyToken": target.reply_token, "messages": messages})
            if resp.status_code == 200:
                return
            if resp.status_code != 400:  # 400: the token expired or was used; push instead
                resp.raise_for_status()
        resp = await self._http.post(f"{self.api}/v2/bot/message/push", json={"to": target.to, "messages": messages})
        resp.raise_for_status()

    async def download(self, message_id: str) -> str:
        """Save a message's image to a private temporary file (at most MAX_IMAGE_BYTES); returns its path.

        Images older than KEEP_IMAGES_S are deleted on the way (seed 003 §13.5: kept for a while,
        then cleaned up); a download that fails or is too large leaves no file.
        """
        if not message_id.isalnum():
            raise ValueError("bad message id")
        _prune_images()
        size = 0
        with tempfile.NamedTemporaryFile(prefix=IMAGE_PREFIX, suffix=".img", delete=False) as fh:
            try:
                async with self._http.stream("GET", f"{self.data}/v2/bot/message/{message_id}/content") as resp:
                    resp.raise_for_status()
                    async for piece in resp.aiter_bytes():
                        size += len(piece)
                        if size > MAX_IMAGE_BYTES:
                            raise ValueError(f"image larger than {MAX_IMAGE_BYTES} bytes")
                        fh.write(piece)
            except BaseException:
                os.unlink(fh.name)
                raise
            return fh.name


def _prune_images(now: float | None = None) -> None:
    current = time.time() if now is None else now
    for path in Path(tempfile.gettempdir()).glob(IMAGE_PREFIX + "*.img"):
        try:
            if current - path.stat().st_mtime > KEEP_IMAGES_S:
                path.unlink()
        except OSError:
            continue
