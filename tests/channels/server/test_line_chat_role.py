"""LINE reaches the Worker and the Coder through the Chat role (seed 003 §2.6): a signed webhook starts at
CHAT, Mio delegates with DELEGATE:/TASK:, and the Chat model writes the final answer. The role models
run on a fake Ollama on 127.0.0.1, LINE's API is a fake on 127.0.0.1, the signatures are real HMACs."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.channels.server.conftest import wait_until
from tests.channels.server.test_webhook_signatures import LINE, line_headers
from tests.orchestra.conftest import worker_json
from tests.orchestra.ollama_server import FakeOllama

USER = {"type": "user", "userId": "U1"}


def _send(srv: Any, text: str, token: str, eid: str) -> None:
    event = {"type": "message", "webhookEventId": eid, "replyToken": token, "source": USER,
             "timestamp": int(time.time() * 1000), "message": {"id": "m" + eid, "type": "text", "text": text}}
    body = json.dumps({"destination": "Ubot", "events": [event]}).encode()
    assert httpx.post(srv.url + "/line/webhook", content=body, headers=line_headers(body)).status_code == 200


def _said(call: dict[str, Any]) -> str:
    return " ".join(m.get("text", "") for m in call["body"]["messages"] if m["type"] == "text")


@pytest.fixture
def roles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    with FakeOllama() as server:
        cfg = tmp_path / "config.toml"
        cfg.write_text('[routing.llm]\nchat_alias = "Mio"\nchat_provider = "ollama"\nchat_model = "worker-v1:latest"\n'
                       'worker_provider = "ollama"\nworker_model = "worker-v1:latest"\n'
                       'coder_provider = "ollama"\ncoder_model = "worker-v1:latest"\n', encoding="utf-8")
        monkeypatch.setenv("DUCKFLOW_CONFIG", str(cfg))
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        yield server


def _serve(live: Any, fake_api: Any) -> tuple[Any, Any]:
    line = fake_api()
    srv = live(line_channel_secret=LINE, line_access_token="line-token", line_api_url=line.url,
               line_allowed=frozenset({"U1"}), line_data_url=line.url)
    return srv, line


def test_mio_answers_on_line_and_delegates_planning_to_the_worker(live: Any, fake_api: Any, roles: Any) -> None:
    srv, line = _serve(live, fake_api)
    roles.replies = ["こんにちは、Mioです。"]
    _send(srv, "こんにちは", "rt-1", "e1")
    first = line.wait_for("/v2/bot/message/reply")[0]
    assert "こんにちは、Mioです。" in _said(first)

    roles.replies = ["DELEGATE: PLAN\nTASK: plan the v1.0 release",
                     worker_json("1. freeze the branch\n2. tag v1.0"),
                     "The plan: freeze the branch, then tag v1.0."]
    _send(srv, "リリースの段取りを考えて", "rt-2", "e2")
    second = line.wait_for("/v2/bot/message/reply", 2)[1]
    said = _said(second)
    assert "The plan: freeze the branch, then tag v1.0." in said and "DELEGATE" not in said
    assert "Mio handed this to Worker: plan the v1.0 release" in said  # who does the work, in words
    assert "plan the v1.0 release" in json.dumps(roles.chat_bodies[2]["messages"])  # the Worker got the TASK
    history = roles.chat_bodies[1]["messages"]  # Mio saw the first exchange
    assert any(m["role"] == "assistant" and "Mioです" in m["content"] for m in history)

    sid = httpx.get(srv.url + "/v1/sessions", headers=srv.auth).json()["sessions"][0]["session_id"]
    chunks = httpx.get(f"{srv.url}/v1/sessions/{sid}/chunks", headers=srv.auth).json()["chunks"]
    agents = [(c["agent"], c["type"]) for c in chunks if c["type"] in ("reply", "done")]
    assert agents[-2:] == [("worker", "reply"), ("worker", "done")]


def test_mio_delegates_code1_and_a_postback_lets_the_worker_apply_the_patch(
        live: Any, fake_api: Any, roles: Any) -> None:
    srv, line = _serve(live, fake_api)
    (srv.workspace / "app.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    patch = "\n".join(["--- a/app.py", "+++ b/app.py", "@@ -1,2 +1,2 @@", " def add(a, b):", "-    return a - b",
                       "+    return a + b", ""])
    roles.replies = ["DELEGATE: CODE1\nTASK: fix add in app.py",
                     json.dumps({"job_id": "j", "plan": "fix the sign", "patch": patch, "risk": "low",
                                 "need_approval": True})]
    _send(srv, "app.pyのaddを直して", "rt-1", "e1")
    reply = line.wait_for("/v2/bot/message/reply")[0]
    template = next(m for m in reply["body"]["messages"] if m["type"] == "template")
    assert template["altText"] == "Approval needed: Edit app.py — +1 −1 lines"
    grant = template["template"]["actions"][0]["data"]
    assert "return a - b" in (srv.workspace / "app.py").read_text()  # nothing applied before the yes

    postback = {"type": "postback", "webhookEventId": "e2", "replyToken": "rt-2", "source": USER,
                "timestamp": int(time.time() * 1000), "postback": {"data": grant}}
    body = json.dumps({"destination": "Ubot", "events": [postback]}).encode()
    assert httpx.post(srv.url + "/line/webhook", content=body, headers=line_headers(body)).status_code == 200
    wait_until(lambda: "return a + b" in (srv.workspace / "app.py").read_text())
    applied = line.wait_for("/v2/bot/message/reply", 2)[1]
    assert "Applied job" in _said(applied)


def test_on_the_api_a_no_with_words_asks_the_coder_again_and_its_new_job_can_be_granted(
        live: Any, roles: Any) -> None:
    """The web page's Deny… box: the words go back to the Coder; the new proposal waits like the first and
    a grant applies it (the new job is found from the API, and the person's words are not echoed as theirs)."""
    srv = live()
    (srv.workspace / "app.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    patch = "\n".join(["--- a/app.py", "+++ b/app.py", "@@ -1,2 +1,2 @@", " def add(a, b):", "-    return a - b",
                       "+    return {}", ""])
    roles.replies = [json.dumps({"job_id": "j1", "plan": "negate b", "patch": patch.format("a + -b"), "risk": "low"}),
                     json.dumps({"job_id": "j2", "plan": "plain sum", "patch": patch.format("a + b"), "risk": "low"})]
    sid = httpx.post(srv.url + "/v1/sessions", headers=srv.auth).json()["session_id"]

    def pending() -> list[dict[str, Any]]:
        return [j for j in httpx.get(srv.url + "/v1/approvals", headers=srv.auth).json()["jobs"]
                if j["status"] == "pending"]

    assert httpx.post(f"{srv.url}/v1/sessions/{sid}/messages", headers=srv.auth,
                      json={"text": "/code1 fix add in app.py"}).status_code == 202
    first = wait_until(pending)[0]["job_id"]
    r = httpx.post(f"{srv.url}/v1/approvals/{first}/deny", headers=srv.auth, json={"note": "just return a + b"})
    assert r.status_code == 200
    second = wait_until(lambda: [j["job_id"] for j in pending() if j["job_id"] != first])[0]
    assert "just return a + b" in json.dumps(roles.chat_bodies[1]["messages"])
    assert httpx.post(f"{srv.url}/v1/approvals/{second}/grant", headers=srv.auth).status_code == 200
    wait_until(lambda: "return a + b" in (srv.workspace / "app.py").read_text())
    chunks = httpx.get(f"{srv.url}/v1/sessions/{sid}/chunks", headers=srv.auth).json()["chunks"]
    said = [c["data"]["details"].get("text") for c in chunks if c["type"] == "notice" and c["data"]["code"] == "route"]
    assert said == ["/code1 fix add in app.py", ""]  # the re-ask is not shown as the person's words
