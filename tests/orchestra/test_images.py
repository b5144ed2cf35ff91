"""Image inputs: content parts per provider, audit before sending and after a timeout, retention of downloads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from duckflow.llm.anthropic import to_anthropic
from duckflow.llm.errors import LLMTimeoutError
from duckflow.llm.ollama import OllamaModel, to_ollama_messages
from duckflow.llm.openai_compat import to_openai_messages
from duckflow.llm.scripted import ScriptedModel, fail, reply
from duckflow.llm.types import ImagePart, Message
from duckflow.orchestra.images import ImageInbox, audit_path
from tests.helpers.vision import png

from .conftest import worker_json
from .ollama_server import FakeOllama

PNG = png(2, 2)


def test_each_provider_gets_its_native_image_form() -> None:
    msg = Message("user", "what is this?", images=[ImagePart(PNG, "image/png", "a.png")])
    openai = to_openai_messages([msg])[0]["content"]
    assert openai[0] == {"type": "text", "text": "what is this?"}
    assert openai[1]["image_url"]["url"].startswith("data:image/png;base64,iVBORw0KGgo")
    _, blocks = to_anthropic([msg])
    assert blocks[0]["content"][0]["type"] == "image" and blocks[0]["content"][0]["source"]["media_type"] == "image/png"
    assert to_ollama_messages([msg])[0]["images"] == [ImagePart(PNG).base64()]
    assert to_openai_messages([Message("user", "plain")])[0]["content"] == "plain"


async def test_chat_gets_the_image_and_every_file_is_audited_before_sending(make_orch: Any, tmp_path: Path) -> None:
    pic = ImageInbox().save(PNG, ".png")
    chat = ScriptedModel([reply("a tiny black square")])
    orch = make_orch({"chat": chat}, channel="line", companion=False)
    (tmp_path / "notes.txt").write_text("not a picture")
    turn = await orch.handle("これは何？", images=[pic, tmp_path / "gone.png", tmp_path / "notes.txt"])
    assert turn.text == "a tiny black square"
    sent = chat.requests[0].messages[-1]
    assert [i.source_path for i in sent.images] == [str(pic)]
    records = [json.loads(x) for x in audit_path().read_text().splitlines()]
    assert [r["included"] for r in records] == [True, False, False]
    assert records[0]["message"] == "LLM image audit before request" and records[0]["local_exists_before"]
    assert records[0]["image_url"].startswith("data:image/png;base64,") and records[0]["image_url_length"] > 40
    assert records[1]["drop_reason"] == "the file does not exist" and "not a PNG" in records[2]["drop_reason"]


async def test_a_timeout_writes_the_after_timeout_audit(make_orch: Any) -> None:
    pic = ImageInbox().save(PNG, ".png")
    chat = ScriptedModel([fail(LLMTimeoutError("chat timed out", provider="x"))] * 4)
    orch = make_orch({"chat": chat}, channel="slack", companion=False)
    await orch.handle("look", images=[pic])
    after = [json.loads(x) for x in audit_path().read_text().splitlines()][-1]
    assert after["message"] == "LLM image audit after timeout" and after["local_exists_after_timeout"] is True


async def test_the_worker_on_ollama_receives_the_image(make_orch: Any) -> None:
    pic = ImageInbox().save(PNG, ".png")
    with FakeOllama() as server:
        server.replies = [worker_json("a square")]
        orch = make_orch({"worker": OllamaModel("worker-v1:latest", base_url=server.url)})
        await orch.handle("/analyze this chart", images=[pic])
        assert server.chat_bodies[0]["messages"][-1]["images"] == [ImagePart(PNG).base64()]


def test_downloads_are_kept_for_the_retention_period_then_removed(tmp_path: Path) -> None:
    now = [1_000_000.0]
    inbox = ImageInbox(tmp_path / "media", retention_s=3600, clock=lambda: now[0])
    old = inbox.save(PNG)
    import os

    os.utime(old, (now[0] - 10, now[0] - 10))
    assert inbox.cleanup() == [] and old.exists()
    now[0] += 3600
    assert inbox.cleanup() == [old] and not old.exists()
