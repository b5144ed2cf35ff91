"""The sanitizer as the LLM layer uses it: a cloud-bound conversation is masked, and echoed
placeholders are restored locally (llm/sanitize.py calls `mask()` once per message)."""

from __future__ import annotations

from duckflow.llm.sanitize import mask_messages, restore_value
from duckflow.llm.types import Message
from duckflow.security.sanitizer import Sanitizer

GH = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"


def test_a_secret_in_a_cloud_bound_prompt_is_masked_and_restored_locally() -> None:
    messages = [
        Message(role="user", content=f"deploy with token {GH}, mail bob@example.com"),
        Message(role="user", content="and cc carol@example.net, then bob@example.com again"),
    ]
    out = mask_messages(messages, Sanitizer())
    sent = "\n".join(m.content for m in out.messages)
    for secret in (GH, "bob@example.com", "carol@example.net"):
        assert secret not in sent
    # two different addresses in two messages never share a placeholder
    assert out.mapping["[PII:email#1]"] == "bob@example.com"
    assert out.mapping["[PII:email#2]"] == "carol@example.net"
    reply = "I sent it to [PII:email#2] using [SECRET:github_token#1]."
    assert restore_value(reply, out.mapping) == f"I sent it to carol@example.net using {GH}."
