"""`POST /line/webhook`: signature first, an immediate 200, the events worked in the background.

Fails closed: without LINE_CHANNEL_SECRET every request is refused (503); a body over
`MAX_BODY` is refused (413) before its signature is computed; a wrong or missing
X-Line-Signature gets 401; a body that is not JSON (or nests too deep) gets 400 in one line.
An event whose signed `timestamp` is more than MAX_AGE_S away from now, or that has no
`webhookEventId`, is dropped; so is an id already taken — kept in SQLite (`channels.seen`), so a
captured request replayed after a restart is refused too. Each text message becomes a message of the session of its source
(`line:user:U…`, `line:group:C…`, `line:room:R…`) and always starts at CHAT (seed 003 §2.6);
images are downloaded to temporary files and passed on; approval buttons come back as
postbacks (`duckflow:grant:JOB` / `duckflow:deny:JOB`) in the same signed webhook. Only users in
LINE_ALLOWED_USERS ("*" = anyone who reaches the bot) are heard: a message reaches the workspace.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine
from typing import Any

from fastapi import APIRouter, HTTPException, Request

from duckflow.channels.jsonbody import json_or_http
from duckflow.channels.line.client import LINE_TEXT_LIMIT, LineTarget
from duckflow.channels.line.verify import check_line
from duckflow.channels.seen import Seen

log = logging.getLogger("duckflow.channels.line")
MAX_BODY = 256 * 1024
MAX_AGE_S = 300  # an event signed longer ago (or ahead) than this is refused: a replay, or a clock gone wrong


def source_identity(source: dict[str, Any]) -> tuple[str, str] | None:
    """(identity, push target) of an event's source: the group or room if any, else the user."""
    kind = source.get("type")
    key = {"group": "groupId", "room": "roomId", "user": "userId"}.get(str(kind))
    ident = source.get(key) if key else None
    if not ident or not isinstance(ident, str):
        return None
    return f"line:{kind}:{ident}", ident


def stale(event: dict[str, Any], now: float) -> str | None:
    """Why an event cannot be taken (no id, no timestamp, signed too long ago), or None."""
    if not isinstance(event.get("webhookEventId"), str) or not event["webhookEventId"]:
        return "it has no webhookEventId"
    stamp = event.get("timestamp")
    if not isinstance(stamp, int | float) or isinstance(stamp, bool):
        return "it has no timestamp"
    age = now - stamp / 1000
    if abs(age) > MAX_AGE_S:
        return f"its timestamp is {int(abs(age))} s {'old' if age > 0 else 'ahead'} (over {MAX_AGE_S} s)"
    return None


def line_router(settings: Any, manager: Any, seen: Seen) -> APIRouter:
    r = APIRouter()
    secret = settings.line_channel_secret
    tasks: set[asyncio.Task[Any]] = set()
    client = None
    if secret and settings.line_access_token:
        from duckflow.channels.line.client import LineClient
        from duckflow.channels.manager import Outbox

        client = LineClient(settings.line_access_token, settings.line_api_url, settings.line_data_url)
        manager.outboxes["line"] = Outbox(client, limit=LINE_TEXT_LIMIT, rate=2.0, burst=5)

    def background(coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.create_task(coro)
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    async def take(event: dict[str, Any]) -> None:
        source = _obj(event.get("source"))
        found = source_identity(source)
        if found is None:
            return
        identity, to = found
        user = str(source.get("userId") or "")
        if not settings.allowed("line", user):
            log.warning("a LINE event from %s was ignored: not in LINE_ALLOWED_USERS", user or "(no user id)")
            return
        target = LineTarget(to, str(event.get("replyToken") or ""), time.monotonic())
        sid = manager.session_for("line", identity)
        kind = event.get("type")
        if kind == "postback":
            data = str(_obj(event.get("postback")).get("data", ""))
            parts = data.split(":")
            if len(parts) == 3 and parts[0] == "duckflow" and parts[1] in ("grant", "deny"):
                manager.submit_answer(sid, parts[2], parts[1] == "grant", by=f"line:{user}",
                                      channel="line", target=target)
            return
        if kind != "message":
            return
        message = _obj(event.get("message"))
        if message.get("type") == "text":
            text = str(message.get("text", "")).strip()
            if text:
                manager.submit(sid, text, "line", target=target)
        elif message.get("type") == "image" and client is not None:
            try:
                path = await client.download(str(message.get("id", "")))
            except Exception as exc:
                log.warning("could not download a LINE image: %s", exc)
                return
            manager.submit(sid, "(the person sent an image)", "line", target=target, images=[path])

    @r.post("/line/webhook")
    async def webhook(request: Request) -> dict[str, Any]:
        if not secret:
            raise HTTPException(503, "LINE is not configured on this server: set LINE_CHANNEL_SECRET")
        declared = request.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > MAX_BODY:
            raise HTTPException(413, f"webhook body larger than {MAX_BODY} bytes")
        body = await request.body()
        if len(body) > MAX_BODY:
            raise HTTPException(413, f"webhook body larger than {MAX_BODY} bytes")
        why = check_line(secret, request.headers.get("x-line-signature"), body)
        if why is not None:
            log.warning("refused a LINE webhook: %s", why)
            raise HTTPException(401, f"LINE signature refused: {why}")
        payload = json_or_http(body, "a LINE webhook body (a JSON object)")
        events = payload.get("events") if isinstance(payload, dict) else None
        now = time.time()
        for event in events if isinstance(events, list) else []:
            if not isinstance(event, dict):
                continue
            why = stale(event, now)
            if why is not None:
                log.warning("a LINE event was refused: %s", why)
                continue
            if not seen.first("line:" + event["webhookEventId"], now):
                log.info("a LINE event already taken was dropped (%s)", event["webhookEventId"])
                continue
            background(take(event))
        return {}

    return r


def _obj(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one (a signed body can still be malformed)."""
    return value if isinstance(value, dict) else {}
