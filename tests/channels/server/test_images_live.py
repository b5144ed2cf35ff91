"""Images on the live routes: a real PNG through a signed LINE webhook, an upload to `/v1`, and
`duckflow run/chat --image`, each reaching a vision model (an OpenAI-compatible server on 127.0.0.1
that decodes the image part it got) — or refused in one line for a model that cannot see.

On main a LINE PNG (saved as `.img`) was dropped as "type unknown", the companion got only its
file name, the CLI had no `--image` and `/v1` no upload.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.channels.server.conftest import sse_events, wait_until
from tests.channels.server.test_webhook_signatures import LINE, line_headers
from tests.helpers.vision import VisionServer, png

SSE = {"Accept": "text/event-stream"}


@pytest.fixture
def vision(monkeypatch: pytest.MonkeyPatch) -> Any:
    with VisionServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-local")
        yield server


def _photo(eid: str) -> bytes:
    event = {"type": "message", "webhookEventId": eid, "replyToken": "rt-" + eid, "timestamp": int(time.time() * 1000),
             "source": {"type": "user", "userId": "U1"}, "message": {"id": "img" + eid, "type": "image"}}
    return json.dumps({"destination": "Ubot", "events": [event]}).encode()


def _line_reply(live: Any, fake_api: Any, model: str, eid: str, picture: bytes) -> tuple[str, Any]:
    api = fake_api()
    api.replies[f"/v2/bot/message/img{eid}/content"] = [(200, picture)]
    srv = live(model_name=model, line_channel_secret=LINE, line_access_token="t", line_api_url=api.url,
               line_data_url=api.url, line_allowed=frozenset({"U1"}))
    body = _photo(eid)
    assert httpx.post(srv.url + "/line/webhook", content=body, headers=line_headers(body)).status_code == 200
    reply = api.wait_for("/v2/bot/message/reply", timeout=60)[0]
    return " ".join(m.get("text", "") for m in reply["body"]["messages"]), srv


def test_a_png_sent_on_line_reaches_a_vision_model(live: Any, fake_api: Any, vision: VisionServer) -> None:
    text, _ = _line_reply(live, fake_api, "openai:gpt-4o-mini", "p1", png(3, 2))
    assert "I see image/png 3x2." in text  # the model decoded the PNG it was sent
    parts = vision.bodies[-1]["messages"][-1]["content"]
    assert parts[0] == {"type": "text", "text": "(the person sent an image)"}
    from duckflow.orchestra.images import audit_path

    record = [json.loads(x) for x in audit_path().read_text().splitlines()][-1]
    assert record["included"] and record["media_type"] == "image/png" and (record["width"], record["height"]) == (3, 2)
    assert record["source_path"].endswith(".img")  # typed by content, not by name


def test_a_model_without_vision_is_refused_in_one_line(live: Any, fake_api: Any) -> None:
    text, _ = _line_reply(live, fake_api, "scripted:demo", "p2", png(3, 2))
    assert "cannot see images" in text and "nothing was sent" in text and "\n" not in text.strip()


def test_a_file_that_is_not_an_image_or_too_many_pixels_is_not_sent(live: Any, fake_api: Any,
                                                                    vision: VisionServer) -> None:
    huge = bytearray(png(1, 1))
    huge[16:24] = (100_000).to_bytes(4, "big") * 2  # a header that claims 100,000 x 100,000
    text, _ = _line_reply(live, fake_api, "openai:gpt-4o-mini", "p3", bytes(huge))
    assert "100000×100000 pixels is over the limit" in text and vision.bodies == []


def test_an_uploaded_image_goes_with_a_message_to_the_model(live: Any, vision: VisionServer) -> None:
    srv = live(model_name="openai:gpt-4o-mini")
    up = httpx.post(srv.url + "/v1/images", content=png(5, 4), headers={**srv.auth, "Content-Type": "image/png"})
    assert up.status_code == 201 and up.json()["media_type"] == "image/png" and up.json()["width"] == 5
    sid = httpx.post(srv.url + "/v1/sessions", headers=srv.auth).json()["session_id"]
    with httpx.stream("POST", f"{srv.url}/v1/sessions/{sid}/messages", json={"text": "what is it?",
                      "images": [up.json()["image"]]}, headers={**srv.auth, **SSE}, timeout=60) as r:
        chunks = [json.loads(e["data"]) for e in sse_events(r.iter_lines()) if e.get("event") == "chunk"]
    replies = [c["data"]["text"] for c in chunks if c["type"] == "reply"]
    assert replies == ["I see image/png 5x4."]
    # the 202 route takes the same field
    r = httpx.post(f"{srv.url}/v1/sessions/{sid}/messages", json={"text": "again", "images": [up.json()["image"]]},
                   headers=srv.auth)
    assert r.status_code == 202
    wait_until(lambda: len(vision.bodies) == 2)
    # what is not an image, or not an upload, is refused in one line
    bad = httpx.post(srv.url + "/v1/images", content=b"GIF89a\x01", headers=srv.auth)
    assert bad.status_code == 422 and "header does not say its size" in bad.json()["detail"]
    text = httpx.post(srv.url + "/v1/images", content=b"hello", headers=srv.auth)
    assert text.status_code == 415 and "not a PNG, JPEG, GIF or WebP" in text.json()["detail"]
    for ids in (["../../server-token"], ["0" * 32 + ".png"]):
        r = httpx.post(f"{srv.url}/v1/sessions/{sid}/messages", json={"text": "x", "images": ids},
                       headers={**srv.auth, **SSE})
        assert r.status_code == 422 and "upload it first" in r.json()["detail"]
    assert httpx.post(srv.url + "/v1/images", content=png(2, 2)).status_code == 401


def _duckflow(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="300")  # one line stays one line
    env.pop("DUCKFLOW_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "duckflow", *args], input=stdin, text=True, capture_output=True,
                          env=env, timeout=120)


def test_duckflow_run_and_chat_send_an_image(tmp_path: Path, vision: VisionServer) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    pic = tmp_path / "shot.png"
    pic.write_bytes(png(7, 3))
    run = _duckflow("run", "what is in this picture?", "--image", str(pic), "-w", str(ws), "--model", "openai:gpt-4o")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "I see image/png 7x3." in run.stdout
    assert vision.bodies[-1]["messages"][-1]["content"][0]["text"] == "what is in this picture?"
    chat = _duckflow("chat", "--new", "--image", str(pic), "-w", str(ws), "--model", "openai:gpt-4o",
                     stdin="and this?\n/exit\n")
    assert "I see image/png 7x3." in chat.stdout, chat.stdout + chat.stderr
    assert "Traceback" not in chat.stderr


def test_duckflow_run_refuses_an_image_for_a_model_without_vision(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    pic = tmp_path / "shot.png"
    pic.write_bytes(png(2, 2))
    run = _duckflow("run", "what is this?", "--image", str(pic), "-w", str(ws), "--model", "scripted:demo")
    assert run.returncode == 1 and "Traceback" not in run.stderr
    said = [ln for ln in run.stdout.splitlines() if "cannot see images" in ln]
    assert len(said) == 1 and "nothing was sent" in said[0], run.stdout
    missing = _duckflow("run", "what is this?", "--image", str(tmp_path / "nope.png"), "-w", str(ws),
                        "--model", "scripted:demo")
    assert missing.returncode == 1 and "nope.png: the file does not exist" in missing.stdout
