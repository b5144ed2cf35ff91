"""The grammars on the wire: `duckflow run`'s session against an OpenAI-compatible server on
127.0.0.1 (what llama.cpp's server is) sends the protocol's GBNF grammar in the request body —
the single-call step in Sym-Ops and in DML, and the two-call Specialized reply."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from duckflow.companion.factory import open_session
from duckflow.companion.store import SessionStore
from duckflow.companion.task import drive
from duckflow.gate import Gate
from tests.helpers.fakeserver import FakeServer, Reply, json_reply, openai_stream

PATH = "/v1/chat/completions"
STEP = {"symops": "~ write hi.py\n#c0.9 #m0.9 #f0.9 #s0.9\n$ create @ hi.py\n---\nprint('hi')\n---\n"
                  "$ run @ python3 hi.py\n~ next: DONE\n",
        "dml": "Thought: write hi.py\nAction:\n🦆▶️[T:write_file|hi.py|\nprint('hi')\n]◀️🦆\n"
               "🦆▶️[T:execute_shell|python3 hi.py]◀️🦆\nNext: DONE\n"}
SHAPE = {"symops": 'create ::= "$ create @ " ( "hi.py"', "dml": '"🦆▶️[T:write_file" "|" ( ( "hi.py" ) ) "|" dblock'}


async def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, codec: str, mode: str,
               replies: list[str]) -> tuple[Any, list[Any], Path]:
    server = await FakeServer().start()
    try:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        server.default("/v1/models", json_reply({"object": "list",
                                                 "data": [{"id": "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"}]}))
        server.queue(PATH, *[Reply(chunks=openai_stream([r])) for r in replies])
        root = tmp_path / "ws"
        root.mkdir()
        o = await asyncio.to_thread(open_session, root, store=SessionStore(tmp_path / "s.db"),
                                    gate=Gate(tmp_path / "g.db"), codec=codec, mode=mode)
        try:
            out = await drive(o.session, o.session.handle_message("Create hi.py that prints hi and run it"),
                              auto_approve_workspace=True, max_turns=6)
        finally:
            o.close()
        return out, server.bodies(PATH), root
    finally:
        await server.close()


@pytest.mark.parametrize("codec", ["symops", "dml"])
async def test_single_call_sends_the_protocols_grammar_to_the_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      codec: str) -> None:
    out, bodies, root = await _run(tmp_path, monkeypatch, codec, "single-call", [STEP[codec]])
    assert out.success and (root / "hi.py").read_text() == "print('hi')\n"
    (body,) = bodies
    assert SHAPE[codec] in body["grammar"] and body["max_tokens"] and body["temperature"] <= 0.2
    assert "response_format" not in body


@pytest.mark.parametrize("codec", ["symops", "dml"])
async def test_two_call_sends_the_schema_then_the_specialized_grammar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      codec: str) -> None:
    decision = json.dumps({"rationale": "write hi.py", "goal_consistency": "yes", "constraint_check": "yes",
                           "next_step": "continue", "step": "EXECUTION", "prompt_pattern": "base_main_specialized",
                           "reply": "Writing hi.py."})
    special = STEP[codec].replace("~ next: DONE\n", "").replace("Next: DONE\n", "")
    out, bodies, root = await _run(tmp_path, monkeypatch, codec, "two-call", [decision, special])
    assert (root / "hi.py").read_text() == "print('hi')\n"
    assert "schema" in bodies[0]["response_format"] and "grammar" not in bodies[0]
    assert SHAPE[codec].replace('( "hi.py" ) )', '( "hi.py" ) | newname )') in bodies[1]["grammar"] \
        or SHAPE[codec] in bodies[1]["grammar"]
    assert "response_format" not in bodies[1]
