"""OllamaModel: native /api/chat NDJSON, health check, restart command, retry once on failure only."""

from __future__ import annotations

import os
import signal
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from duckflow.llm.errors import (
    LLMBadRequestError,
    LLMConnectionError,
    LLMResponseError,
    LLMServerError,
)
from duckflow.llm.ollama import OllamaModel
from duckflow.llm.types import Message, TextDelta, ToolSpec, Usage, complete
from tests.helpers.fakeserver import FakeServer, Reply, json_reply, ollama_stream
from tests.llm.conftest import Recorder

FAKE = Path(__file__).parents[1] / "helpers" / "fake_ollama.py"


def healthy(server: FakeServer, model: str = "qwen:7b", context: int = 8192) -> FakeServer:
    server.default("/api/version", json_reply({"version": "0.5"}))
    server.default("/api/tags", json_reply({"models": [{"name": model, "model": model}]}))
    server.default("/api/show", json_reply({"model_info": {"qwen2.context_length": context}}))
    return server


async def test_chat_streams_ndjson_with_keep_alive_and_num_ctx(server: FakeServer) -> None:
    server.queue("/api/chat", Reply(chunks=ollama_stream(["Hel", "lo"]), content_type="application/x-ndjson"))
    m = OllamaModel("qwen:7b", base_url=server.url)
    assert m.is_local and m.name == "ollama:qwen:7b"
    events = [e async for e in m.stream([Message("user", "hi")])]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hel", "lo"]
    body = server.bodies("/api/chat")[0]
    assert body["keep_alive"] == -1 and body["options"]["num_ctx"] == 8192 and body["stream"] is True
    server.queue("/api/chat", Reply(chunks=ollama_stream(["x"])))
    assert (await complete(m, [Message("user", "hi")])).usage == Usage(13, 5)


async def test_native_tool_calls(server: FakeServer) -> None:
    calls = [{"function": {"name": "read_file", "arguments": {"path": "a.py"}}}]
    server.queue("/api/chat", Reply(chunks=ollama_stream([], tool_calls=calls)))
    spec = ToolSpec("read_file", "read", {"type": "object", "properties": {"path": {"type": "string"}}})
    resp = await complete(OllamaModel("qwen:7b", base_url=server.url), [Message("user", "x")], tools=[spec])
    assert resp.tool_calls[0].name == "read_file" and resp.tool_calls[0].arguments == {"path": "a.py"}
    assert resp.finish_reason == "tool_calls"
    assert server.bodies("/api/chat")[0]["tools"][0]["function"]["name"] == "read_file"


async def test_garbage_line_and_cut_stream(server: FakeServer) -> None:
    healthy(server)
    m = OllamaModel("qwen:7b", base_url=server.url)
    server.queue("/api/chat", Reply(chunks=ollama_stream(["a"], done=False) + ["{oops\n"]))
    with pytest.raises(LLMResponseError):
        await complete(m, [Message("user", "x")])
    server.queue("/api/chat", Reply(chunks=ollama_stream(["a", "b"], done=False)))
    with pytest.raises(LLMServerError, match="incomplete"):
        async for _ in m.stream([Message("user", "x")]):
            pass


async def test_health_reports_server_model_and_context(server: FakeServer) -> None:
    healthy(server, context=32768)
    h = await OllamaModel("qwen:7b", base_url=server.url, max_context=8192).health()
    assert h.server_up and h.model_listed and h.context_length == 32768
    assert not h.ok and not h.needs_restart and "above max_context 8192" in h.problems[0]
    h2 = await OllamaModel("llama3:8b", base_url=server.url).health()
    assert h2.server_up and not h2.model_listed and h2.needs_restart


async def test_context_out_of_bounds_refuses_before_calling(server: FakeServer) -> None:
    healthy(server, context=2048)
    m = OllamaModel("qwen:7b", base_url=server.url, min_context=4096, max_context=8192)
    with pytest.raises(LLMBadRequestError, match="below min_context 4096"):
        await complete(m, [Message("user", "x")])
    assert not server.bodies("/api/chat")


async def test_model_without_tag_matches_latest(server: FakeServer) -> None:
    healthy(server, model="chat-v1:latest")
    assert (await OllamaModel("chat-v1", base_url=server.url).health()).model_listed


async def test_successful_call_never_restarts(server: FakeServer, tmp_path: Path) -> None:
    marker = tmp_path / "restarted"
    server.queue("/api/chat", Reply(chunks=ollama_stream(["fine"])))
    m = OllamaModel("qwen:7b", base_url=server.url,
                    restart_command=[sys.executable, "-c", f"open({str(marker)!r}, 'w')"])
    assert (await complete(m, [Message("user", "x")])).text == "fine"
    assert m.restarts == 0 and not marker.exists()
    assert [r.path for r in server.requests] == ["/api/chat"]


async def test_failure_with_healthy_server_does_not_restart(server: FakeServer, tmp_path: Path) -> None:
    healthy(server)
    server.queue("/api/chat", json_reply({"error": "boom"}, status=500))
    m = OllamaModel("qwen:7b", base_url=server.url, restart_command=[sys.executable, "-c", "pass"])
    with pytest.raises(LLMServerError, match="boom"):
        await complete(m, [Message("user", "x")])
    assert m.restarts == 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def pidfile(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "fake_ollama.pid"
    yield path
    if path.exists():
        try:
            os.kill(int(path.read_text()), signal.SIGTERM)
        except (ProcessLookupError, ValueError):
            pass


async def test_server_down_restart_command_then_retry_once(pidfile: Path, rec: Recorder) -> None:
    port = _free_port()
    cmd = [sys.executable, str(FAKE), str(port), str(pidfile), "worker-v1:latest"]
    m = OllamaModel("worker-v1:latest", base_url=f"http://127.0.0.1:{port}", restart_command=cmd,
                    restart_wait_s=20, on_event=rec, max_context=8192)
    resp = await complete(m, [Message("user", "x")])
    assert resp.text == "restarted ok (worker-v1:latest)"
    assert m.restarts == 1 and pidfile.exists()
    assert rec.names() == ["ollama_health", "ollama_restart"]
    assert rec.events[0][1]["ok"] is False
    # healthy now: the next call goes straight through, no second restart
    assert (await complete(m, [Message("user", "y")])).text.startswith("restarted ok")
    assert m.restarts == 1


async def test_concurrent_failures_share_one_restart(pidfile: Path, rec: Recorder) -> None:
    import asyncio

    port = _free_port()
    cmd = [sys.executable, str(FAKE), str(port), str(pidfile), "qwen:7b"]
    m = OllamaModel("qwen:7b", base_url=f"http://127.0.0.1:{port}", restart_command=cmd,
                    restart_wait_s=20, on_event=rec)
    answers = await asyncio.gather(*(complete(m, [Message("user", str(i))]) for i in range(3)))
    assert [a.text for a in answers] == ["restarted ok (qwen:7b)"] * 3
    assert m.restarts == 1 and rec.names().count("ollama_restart") == 1


async def test_server_down_without_restart_command_says_what_to_do() -> None:
    m = OllamaModel("qwen:7b", base_url=f"http://127.0.0.1:{_free_port()}", health_timeout_s=1)
    with pytest.raises(LLMConnectionError, match="no restart command") as info:
        await complete(m, [Message("user", "x")])
    assert "ollama serve" in (info.value.hint or "")


async def test_restart_that_does_not_heal_fails_after_bound(tmp_path: Path) -> None:
    m = OllamaModel("qwen:7b", base_url=f"http://127.0.0.1:{_free_port()}", health_timeout_s=0.5,
                    restart_command=[sys.executable, "-c", "import time; time.sleep(0.1)"], restart_wait_s=1.0)
    with pytest.raises(LLMConnectionError, match="still unhealthy") as info:
        await complete(m, [Message("user", "x")])
    assert m.restarts == 1 and not info.value.retryable


async def test_restart_command_that_fails_is_reported(tmp_path: Path) -> None:
    m = OllamaModel("qwen:7b", base_url=f"http://127.0.0.1:{_free_port()}", health_timeout_s=0.5,
                    restart_command=[sys.executable, "-c", "raise SystemExit(3)"], restart_wait_s=5.0)
    with pytest.raises(LLMConnectionError, match="exited with status 3"):
        await complete(m, [Message("user", "x")])


async def test_missing_model_restart_and_single_retry(server: FakeServer, tmp_path: Path) -> None:
    """Model not listed → restart command → listed → one retry; a second failure is raised."""
    flag = tmp_path / "loaded"
    server.default("/api/version", json_reply({"version": "0.5"}))
    server.default("/api/tags", lambda req: json_reply(
        {"models": [{"name": "qwen:7b"}] if flag.exists() else []}))
    server.default("/api/show", json_reply({"model_info": {}}))
    server.queue("/api/chat", json_reply({"error": "model 'qwen:7b' not found"}, status=404),
                 json_reply({"error": "still broken"}, status=500))
    m = OllamaModel("qwen:7b", base_url=server.url,
                    restart_command=[sys.executable, "-c", f"open({str(flag)!r}, 'w')"], restart_wait_s=10)
    with pytest.raises(LLMServerError, match="still broken"):
        await complete(m, [Message("user", "x")])
    assert m.restarts == 1 and flag.exists()
    assert len(server.bodies("/api/chat")) == 2


async def test_api_show_is_read_once_with_one_rule(server: FakeServer) -> None:
    healthy(server)
    server.default("/api/show", json_reply({"model_info": {
        "general.architecture": "qwen2", "clip.context_length": 512, "qwen2.context_length": 32768}}))
    m = OllamaModel("qwen:7b", base_url=server.url, min_context=4096)
    assert (await m.health()).context_length == 32768  # the architecture's key, not the first
    server.queue("/api/chat", Reply(chunks=ollama_stream(["ok"])))
    assert (await complete(m, [Message("user", "x")])).text == "ok"  # verified from the same reading
    assert len(server.bodies("/api/show")) == 1
