"""`POST /v1/essays/{style,check,eval,draft}` through the real server, behind the bearer token."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.apps.smartao import texts
from tests.apps.smartao.test_essay_cli import openai_server  # noqa: F401 (a fixture)
from tests.helpers.fakeserver import FakeServer, Reply, openai_stream

ESSAY = "【志望動機】\n私は都市計画を学びたいです。。\n私は毎週末に街を歩く。\n"


def test_style_answers_with_line_col_sentence_and_the_new_text(live: Any) -> None:
    srv = live()
    r = httpx.post(srv.url + "/v1/essays/style", json={"text": ESSAY}, headers=srv.auth, timeout=60)
    assert r.status_code == 200, r.text
    data = r.json()
    got = {(i["rule"], i["line"], i["col"]) for i in data["style"]["issues"]}
    assert ("ja-double-punct", 2, 14) in got and ("ja-mixed-style", 3, 1) in got
    assert data["new_text"] == ESSAY.replace("。。", "。")


def test_every_essay_route_needs_the_token(live: Any) -> None:
    srv = live()
    for task in ("style", "check", "eval", "draft"):
        r = httpx.post(srv.url + f"/v1/essays/{task}", json={"text": ESSAY}, timeout=30)
        assert r.status_code == 401, task
    assert httpx.post(srv.url + "/v1/essays/nope", json={"text": ESSAY}, headers=srv.auth).status_code == 422


def test_check_lists_passages_and_a_missing_corpus_is_one_line(live: Any) -> None:
    srv = live()
    body = {"text": texts.EN_PARTIAL, "refs": [{"name": "urban.txt", "text": texts.EN_REF}]}
    r = httpx.post(srv.url + "/v1/essays/check", json=body, headers=srv.auth, timeout=60)
    p = r.json()["plagiarism"]
    assert p["verdict"] == "warn" and p["matches"][0]["ref"] == "urban.txt"
    assert p["matches"][0]["passages"][0]["text"].startswith("I have always been fascinated")
    bad = httpx.post(srv.url + "/v1/essays/check", json={"text": "x"}, headers=srv.auth)
    assert bad.status_code == 422 and "needs references" in bad.json()["detail"]


def _judge_replies(server: FakeServer) -> Any:
    from tests.apps.smartao.judges import Judge

    judge = Judge({c: ([1], [{"level": 3, "shows": f"{texts.REASONS[c]}.", "missing": f"a second example of {c}"}])
                   for c in ("motivation", "evidence", "reflection", "fit", "expression")})
    server.default("/v1/chat/completions", lambda req: Reply(chunks=openai_stream(
        [judge.answer(json.loads(req.body)["messages"][-1]["content"])])))
    return judge


def test_eval_and_draft_use_a_model_and_errors_are_422(live: Any, openai_server: FakeServer,  # noqa: F811
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.url + "/v1")
    _judge_replies(openai_server)
    srv = live()
    r = httpx.post(srv.url + "/v1/essays/eval", json={"text": texts.ESSAY_EN, "model": "openai:tiny"},
                   headers=srv.auth, timeout=60)
    assert r.status_code == 200, r.text
    ev = r.json()["evaluation"]
    motivation = ev["scores"][0]
    assert len(ev["scores"]) == 5 and motivation["quotes"][0]["text"] == "I want to study public health."
    assert motivation["to_next"] == 'In paragraph 1, after "I want to study public health.", add a sentence with ' \
                                    "a second example of motivation."
    openai_server.queue("/v1/chat/completions", Reply(chunks=openai_stream(["not json"])))
    openai_server.queue("/v1/chat/completions", Reply(chunks=openai_stream(["still not json"])))
    bad = httpx.post(srv.url + "/v1/essays/draft", json={"text": texts.ESSAY_EN, "model": "openai:tiny"},
                     headers=srv.auth, timeout=60)
    assert bad.status_code == 422 and "no usable answer" in bad.json()["detail"]


def test_eval_streams_progress_chunks_over_sse_then_the_report(live: Any, openai_server: FakeServer,  # noqa: F811
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.url + "/v1")
    _judge_replies(openai_server)
    srv = live()
    events: list[tuple[str, str, dict[str, Any]]] = []
    with httpx.stream("POST", srv.url + "/v1/essays/eval", json={"text": texts.ESSAY_EN, "model": "openai:tiny"},
                      headers={**srv.auth, "Accept": "text/event-stream"}, timeout=60) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        frame: dict[str, str] = {}
        for line in r.iter_lines():
            if not line:
                events.append((frame["id"], frame["event"], json.loads(frame["data"])))
                frame = {}
            elif not line.startswith(":"):
                key, _, value = line.partition(": ")
                frame[key] = value
    kinds = [e[1] for e in events]
    assert kinds[-1] == "done" and kinds.count("progress") == 5
    assert [int(e[0]) for e in events] == list(range(1, len(events) + 1))   # seq grows by one, like a conversation
    progress = [e[2]["data"]["what"] for e in events if e[1] == "progress"]
    assert progress[0] == "criterion 1 of 5 (motivation)…" and "s left" in progress[-1]   # once a question is timed
    report = json.loads(events[-1][2]["data"]["text"])
    assert report["evaluation"]["judged"] == 5 and events[-1][2]["agent"] == "Coordinator"
