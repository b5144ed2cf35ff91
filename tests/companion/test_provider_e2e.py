"""The companion against a real local HTTP server speaking OpenAI chat completions (no network)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from duckflow.companion.factory import open_session
from duckflow.companion.state import Step
from duckflow.companion.store import SessionStore
from duckflow.companion.task import drive
from duckflow.gate import Gate
from tests.helpers.fakeserver import FakeServer, Reply, json_reply, openai_stream

PATH = "/v1/chat/completions"


def _decision(step: str, pattern: str, next_step: str, say: str) -> str:
    return json.dumps({"rationale": say, "goal_consistency": "yes", "constraint_check": "yes",
                       "next_step": next_step, "step": step, "prompt_pattern": pattern, "reply": say})


async def test_run_with_a_model_chosen_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = await FakeServer().start()
    try:
        monkeypatch.setenv("OPENAI_API_KEY", "dummy")
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        # a local server is asked which model it serves; the name is sent as given
        server.default("/v1/models", json_reply({"object": "list", "data": [{"id": "Org/Coder_Small.Q4.gguf"}]}))
        write = [{"index": 0, "id": "call_1", "type": "function",
                  "function": {"name": "write_file", "arguments": json.dumps({"path": "a.txt", "content": "hi\n"})}}]
        server.queue(
            PATH,
            Reply(chunks=openai_stream([_decision("EXECUTION", "base_main_specialized", "continue", "write a.txt")])),
            Reply(chunks=openai_stream([""], tool_calls=write)),
            Reply(chunks=openai_stream([_decision("DONE", "base_main", "done", "a.txt is written")])),
        )
        root = tmp_path / "ws"
        root.mkdir()
        o = await asyncio.to_thread(open_session, root, store=SessionStore(tmp_path / "s.db"),
                                    gate=Gate(tmp_path / "g.db"), codec="native")
        try:
            assert o.model_name == "openai:Org/Coder_Small.Q4.gguf"
            out = await drive(o.session, o.session.handle_message("write a.txt"), auto_approve_workspace=True)
        finally:
            o.close()
        assert out.success and (root / "a.txt").read_text() == "hi\n"
        assert o.session.state.step == Step.DONE
        bodies = server.bodies(PATH)
        assert len(bodies) == 3 and bodies[0]["model"] == "Org/Coder_Small.Q4.gguf"
        assert "tools" not in bodies[0] and bodies[1]["tools"][0]["type"] == "function"  # native codec
        assert bodies[0]["messages"][0]["role"] == "system" and "Working memory" in bodies[0]["messages"][0]["content"]
    finally:
        await server.close()
