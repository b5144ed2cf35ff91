"""`POST /slack/events` and `POST /slack/interactions`: signed, answered at once, worked in the background.

Only when SLACK_SIGNING_SECRET is set do these endpoints accept anything (503 otherwise); every
request's signature and timestamp are checked before its body is read as JSON. A message (or
an app mention) becomes a message of the session of its thread (`slack:{channel}:{thread_ts}`);
Slack's retries of an event already taken are acknowledged and dropped (the ids are kept in
SQLite, `channels.seen`, so also after a restart). Approval buttons come
back as interactions, verified the same way, and answer the session's pending job. Only users
in SLACK_ALLOWED_USERS ("*" = anyone in the channel) are heard: a message reaches the workspace.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from fastapi import APIRouter, HTTPException, Request, Response

from duckflow.channels.jsonbody import json_or_http
from duckflow.channels.seen import Seen
from duckflow.channels.slack.verify import check_slack

log = logging.getLogger("duckflow.channels.slack")
SLACK_TEXT_LIMIT = 3000  # a section block's text limit; longer replies are split
_MENTION = re.compile(r"<@[A-Z0-9]+>\s*")


@dataclass(frozen=True)
class SlackTarget:
    channel: str
    thread_ts: str


def slack_router(settings: Any, manager: Any, seen: Seen) -> APIRouter:
    r = APIRouter()
    secret = settings.slack_signing_secret
    tasks: set[asyncio.Task[Any]] = set()
    if secret and settings.slack_bot_token:
        from duckflow.channels.manager import Outbox
        from duckflow.channels.slack.client import SlackSender

        manager.outboxes["slack"] = Outbox(SlackSender(settings.slack_bot_token, settings.slack_api_url),
                                           limit=SLACK_TEXT_LIMIT, rate=1.0, burst=3)

    def background(coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.create_task(coro)
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    async def verified(request: Request) -> bytes:
        if not secret:
            raise HTTPException(503, "Slack is not configured on this server: set SLACK_SIGNING_SECRET")
        body = await request.body()
        why = check_slack(secret, request.headers.get("x-slack-request-timestamp"),
                          request.headers.get("x-slack-signature"), body)
        if why is not None:
            log.warning("refused a Slack request: %s", why)
            raise HTTPException(401, f"Slack signature refused: {why}")
        return body

    async def take_message(event: dict[str, Any]) -> None:
        if not settings.allowed("slack", str(event.get("user", ""))):
            log.warning("a Slack message from %s was ignored: not in SLACK_ALLOWED_USERS", event.get("user"))
            return
        channel, ts = str(event.get("channel", "")), str(event.get("ts", ""))
        thread = str(event.get("thread_ts") or ts)
        text = _MENTION.sub("", str(event.get("text", ""))).strip()
        if not channel or not thread or not text:
            return
        sid = manager.session_for("slack", f"slack:{channel}:{thread}")
        manager.submit(sid, text, "slack", target=SlackTarget(channel, thread))

    @r.post("/slack/events")
    async def events(request: Request) -> Any:
        body = await verified(request)
        payload = json_or_http(body, "a Slack event (a JSON object)")
        kind = payload.get("type") if isinstance(payload, dict) else None
        if kind == "url_verification":
            return {"challenge": str(payload.get("challenge", ""))}
        if kind == "event_callback":
            event = _obj(payload.get("event"))
            wanted = (event.get("type") in ("message", "app_mention") and not event.get("bot_id")
                      and not event.get("subtype"))
            key = f"{event.get('channel')}:{event.get('ts')}"
            if wanted and seen.first(f"slack:{payload.get('event_id') or key}") and seen.first(f"slack:{key}"):
                background(take_message(event))
        return Response(status_code=200)

    async def take_answer(payload: dict[str, Any]) -> None:
        action = _first_action(payload)
        granted = action.get("action_id") == "duckflow_approve"
        job_id = str(action.get("value", ""))
        channel = str(_obj(payload.get("channel")).get("id", ""))
        message = _obj(payload.get("message"))
        thread = str(message.get("thread_ts") or message.get("ts") or "")
        user = str(_obj(payload.get("user")).get("id", ""))
        if not settings.allowed("slack", user):
            log.warning("a Slack approval by %s was ignored: not in SLACK_ALLOWED_USERS", user)
            return
        sid = manager.identities.get(f"slack:{channel}:{thread}")
        if sid is None or not job_id:
            log.warning("a Slack approval for an unknown thread or job was ignored")
            return
        manager.submit_answer(sid, job_id, granted, by=f"slack:{user}", channel="slack",
                              target=SlackTarget(channel, thread))

    @r.post("/slack/interactions")
    async def interactions(request: Request) -> Any:
        body = await verified(request)
        try:
            field = parse_qs(body.decode("utf-8"))["payload"][0]
        except (KeyError, IndexError, ValueError, UnicodeDecodeError):
            raise HTTPException(400, "expected a form field `payload` holding JSON") from None
        payload = json_or_http(field.encode("utf-8"), "a form field `payload` holding JSON")
        if isinstance(payload, dict) and payload.get("type") == "block_actions":
            action = _first_action(payload)
            if action.get("action_id") in ("duckflow_approve", "duckflow_deny"):
                background(take_answer(payload))
        return Response(status_code=200)

    return r


def _obj(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one (a signed body can still be malformed)."""
    return value if isinstance(value, dict) else {}


def _first_action(payload: dict[str, Any]) -> dict[str, Any]:
    actions = payload.get("actions")
    return _obj(actions[0]) if isinstance(actions, list) and actions else {}
