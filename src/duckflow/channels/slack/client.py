"""Sends replies to Slack through the official SDK (`slack_sdk`'s AsyncWebClient, `[slack]` extra).

A reply goes into the thread it answers. An approval waiting adds a card in the words of
channels/present.py: its headline ("Create hello.py — 6 lines"), the points (why, impact,
instead, risk), the diff (cut to fit a block) and Approve / Deny
buttons whose value is the job id (their clicks come back to `/slack/interactions`).
"""

from __future__ import annotations

from typing import Any

DIFF_LIMIT = 2500


def approval_blocks(approval: dict[str, Any]) -> list[dict[str, Any]]:
    from duckflow.channels.actionwords import card

    req = approval.get("request") or {}
    job_id = str(approval.get("job_id", ""))
    parts = card(req, approval.get("call"), job_id)
    points = "\n".join([f"*{parts['headline']}* (job `{parts['job']}`)"]
                       + [f"*{k}:* {v}" for k, v in parts["points"]])
    blocks: list[dict[str, Any]] = [{"type": "section", "text": {"type": "mrkdwn", "text": points[:2990]}}]
    diff = str(req.get("diff_preview") or "")
    if diff:
        shown = diff if len(diff) <= DIFF_LIMIT else diff[:DIFF_LIMIT] + "\n… (cut; see the web page)"
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": f"```{shown}```"}})
    blocks.append({"type": "actions", "elements": [
        {"type": "button", "action_id": "duckflow_approve", "style": "primary", "value": job_id,
         "text": {"type": "plain_text", "text": "Approve"}},
        {"type": "button", "action_id": "duckflow_deny", "style": "danger", "value": job_id,
         "text": {"type": "plain_text", "text": "Deny"}},
    ]})
    return blocks


class SlackSender:
    def __init__(self, token: str, base_url: str | None = None) -> None:
        try:
            from slack_sdk.web.async_client import AsyncWebClient
        except ImportError as exc:
            from duckflow.errors import DuckflowError

            raise DuckflowError("Slack replies need the `[slack]` extra",
                                hint="pip install 'duckflow-agent[slack]'") from exc
        kwargs: dict[str, Any] = {"token": token}
        if base_url:
            kwargs["base_url"] = base_url.rstrip("/") + "/"
        self.client = AsyncWebClient(**kwargs)

    async def send(self, target: Any, part: str, approval: dict[str, Any] | None) -> None:
        kwargs: dict[str, Any] = {"channel": target.channel, "thread_ts": target.thread_ts,
                                  "text": part or "An approval is waiting."}
        if approval is not None:
            blocks = approval_blocks(approval)
            if part:
                blocks.insert(0, {"type": "section", "text": {"type": "mrkdwn", "text": part[:2990]}})
            kwargs["blocks"] = blocks
        await self.client.chat_postMessage(**kwargs)
