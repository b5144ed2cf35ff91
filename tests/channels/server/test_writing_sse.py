"""The web's SSE stream carries what a model writes while it writes: a native call's file text and
command as `tool_call_delta` chunks (decoded, in order, before the call runs and the turn ends), and a
DML reply's lines as `delta` chunks, then the turn's quiet end line. Real server on 127.0.0.1."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from duckflow.llm.scripted import ScriptedModel, reply, streamed_call
from tests.channels.server.conftest import sse_events
from tests.helpers.companion import decision

CONTENT = 'import sys\n\nprint("hi é 😀", *sys.argv[1:])\n'


def _turn(srv: Any, text: str) -> list[dict[str, Any]]:
    made = httpx.post(srv.url + "/v1/sessions", headers=srv.auth).json()
    assert "session_id" in made, made
    sid = made["session_id"]
    with httpx.stream("POST", f"{srv.url}/v1/sessions/{sid}/messages", json={"text": text},
                      headers={**srv.auth, "Accept": "text/event-stream"}, timeout=30) as r:
        assert r.status_code == 200
        return [json.loads(e["data"]) for e in sse_events(r.iter_lines()) if e.get("event") == "chunk"]


def test_a_native_calls_file_streams_over_sse_before_the_card(live: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    script = [decision("EXECUTION", "base_main_specialized", rationale="write it", say="Writing greet.py."),
              streamed_call("write_file", every=3, path="greet.py", content=CONTENT)]
    monkeypatch.setattr("duckflow.companion.models.load_model",
                        lambda name, config: ScriptedModel(list(script), name="s", supports_tools=True))
    chunks = _turn(live(), "Create greet.py that greets its arguments")
    types = [c["type"] for c in chunks]
    forming = [c["data"] for c in chunks if c["type"] == "tool_call_delta"]
    assert forming and types.index("tool_call_delta") < types.index("approval") < types.index("done")
    assert "".join(d["text"] for d in forming if d["key"] == "content") == CONTENT
    assert "".join(d["text"] for d in forming if d["key"] == "path") == "greet.py"
    assert {d["name"] for d in forming} == {"write_file"}
    ends = [c["data"]["message"] for c in chunks if c["type"] == "notice" and c["data"]["code"] == "turn_end"]
    assert len(ends) == 1 and "tokens in" in ends[0] and "scripted:s" in ends[0]


DML = ("Thought: write greet.py\nAction:\n🦆▶️[T:write_file|greet.py|\nimport sys\nprint('hi')\n]◀️🦆\n"
       "🦆▶️[T:execute_shell|python3 greet.py]◀️🦆\nNext: DONE\n")


def test_a_dml_reply_streams_over_sse_line_by_line(live: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("duckflow.companion.models.load_model",
                        lambda name, config: ScriptedModel([reply(DML, chunks=[DML[i:i + 4] for i in range(0, len(DML), 4)])],
                                                           name="s", supports_tools=False))
    monkeypatch.setenv("DUCKFLOW_CODEC", "dml")
    monkeypatch.setenv("DUCKFLOW_MODE", "single_call")
    chunks = _turn(live(), "Create greet.py that prints hi")
    written = [c["data"]["text"] for c in chunks if c["type"] == "delta" and c["agent"] == "companion.specialized"]
    assert "🦆▶️[T:write_file|greet.py|\n" in written and "print('hi')\n" in written  # line by line, as written
    types = [c["type"] for c in chunks]
    first = types.index("delta")
    assert first < types.index("done") and all(t != "tool_call" for t in types[:first])
    ends = [c["data"]["message"] for c in chunks if c["type"] == "notice" and c["data"]["code"] == "turn_end"]
    assert len(ends) == 1 and "tokens in" in ends[0]  # the quiet end line, in DML too
