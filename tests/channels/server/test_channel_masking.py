"""A chat service is a cloud: what Duckflow sends to Slack/LINE is masked like a model call.

The model's reply is restored (placeholders back to the originals) after the cloud model call,
and an approval card carries the diff of what a tool wants to write; both used to reach the
chat service's servers with the secret in clear. Real server on 127.0.0.1, signed Slack event,
slack_sdk posting to a fake Slack Web API on 127.0.0.1, real gate and SQLite.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from duckflow.llm.scripted import ScriptedModel, tool_call
from tests.channels.server.test_slack import _event
from tests.channels.server.test_webhook_signatures import SLACK, slack_headers
from tests.helpers.companion import decision

pytest.importorskip("slack_sdk")
pytest.importorskip("aiohttp")

STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"  # the format Stripe documents for examples
MAIL = "hanako.yamada@example.co.jp"


def test_replies_and_approval_cards_reach_slack_masked(live: Any, fake_api: Any,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    script = [decision("EXECUTION", "base_main_specialized", rationale=f"store {STRIPE} for {MAIL}",
                       say=f"I will put {STRIPE} into settings.py"),
              tool_call("write_file", path="settings.py", content=f'STRIPE_KEY = "{STRIPE}"\nADMIN = "{MAIL}"\n')]
    monkeypatch.setattr("duckflow.companion.models.load_model",
                        lambda name, config: ScriptedModel(list(script), name="s", supports_tools=True))
    slack = fake_api()
    srv = live(slack_signing_secret=SLACK, slack_bot_token="xoxb-test", slack_api_url=slack.url + "/api/",
               slack_allowed=frozenset({"U9"}))
    body = _event("<@UBOT> store my stripe key", event_id="EvMask")
    r = httpx.post(srv.url + "/slack/events", content=body, headers=slack_headers(body))
    assert r.status_code == 200
    posts = slack.wait_for("/api/chat.postMessage")
    sent = json.dumps([p["body"] for p in posts])
    assert "settings.py" in sent and "Approve" in sent  # the card went out
    assert STRIPE not in sent and MAIL not in sent, sent
    assert "[SECRET:" in sent and "[PII:email#" in sent
    blocks = posts[-1]["body"]["blocks"]
    blocks = json.loads(blocks) if isinstance(blocks, str) else blocks
    job_id = next(e for b in blocks if b["type"] == "actions" for e in b["elements"])["value"]
    # the job id in the buttons is kept: the click still finds the job, which holds the original
    job = httpx.get(f"{srv.url}/v1/approvals/{job_id}", headers=srv.auth).json()
    assert job["status"] == "pending"


def test_the_line_card_and_text_are_masked_too() -> None:
    from duckflow.channels.line.client import approval_text
    from duckflow.channels.manager import masked_for_cloud

    approval = {"job_id": "0123456789abcdef", "request": {"intent": "write settings.py", "risk": "low",
                                                          "diff_preview": f'+STRIPE_KEY = "{STRIPE}"'}}
    text, card = masked_for_cloud(f"key {STRIPE}", approval)
    assert card is not None and STRIPE not in text and STRIPE not in approval_text(card)
    assert card["job_id"] == "0123456789abcdef" and approval_text(card).startswith("Write settings.py  (job 01234567)")
