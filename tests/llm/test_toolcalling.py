"""Codec per model: a family table, `duckflow models probe` against a real local server, remembered."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from duckflow.core.codecs import resolve_codec
from duckflow.llm.scripted import ScriptedModel
from duckflow.llm.toolcalling import family_verdict, reliable_native, remembered
from tests.helpers.fakeserver import FakeServer, Reply, openai_stream

PATH = "/v1/chat/completions"


class Named:
    def __init__(self, name: str, supports_tools: bool = True) -> None:
        self.name, self.supports_tools, self.is_local = name, supports_tools, False


@pytest.mark.parametrize(("name", "native"), [
    ("openai:gpt-4o-mini", True), ("anthropic:claude-3-5-sonnet-latest", True), ("ollama:qwen2.5:7b", True),
    ("ollama:llama3.1:8b", True), ("ollama:qwen2.5-coder:1.5b", False), ("ollama:deepseek-r1:8b", False),
    ("ollama:gemma2:9b", False), ("local:default", False), ("openai:some-new-model", None),
])  # fmt: skip
def test_family_table(name: str, native: bool | None) -> None:
    assert family_verdict(name) is native


def test_auto_codec_by_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DUCKFLOW_HOME", str(tmp_path))
    assert resolve_codec(None, Named("openai:gpt-4o")).native
    assert resolve_codec("auto", Named("ollama:qwen2.5-coder:1.5b")).name == "symops"
    assert resolve_codec(None, Named("openai:unknown-model")).name == "symops"  # not known reliable
    assert resolve_codec(None, Named("openai:gpt-4o", supports_tools=False)).name == "symops"
    assert resolve_codec(None, ScriptedModel([])).native  # a script's own flag


def _serve(server: FakeServer, stop: threading.Event, ready: threading.Event) -> None:
    async def main() -> None:
        await server.start()
        ready.set()
        while not stop.is_set():
            await asyncio.sleep(0.02)
        await server.close()

    asyncio.run(main())


@pytest.mark.parametrize("calls_tool", [True, False])
def test_models_probe_checks_once_and_remembers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str], calls_tool: bool) -> None:
    from duckflow.channels.cli.main import main as cli

    server = FakeServer()
    frag: dict[str, Any] = {"index": 0, "id": "call_1", "type": "function",
                            "function": {"name": "get_weather", "arguments": json.dumps({"city": "Paris"})}}
    server.queue(PATH, Reply(chunks=openai_stream([] if calls_tool else ["It is sunny."],
                                                  tool_calls=[frag] if calls_tool else None)))
    stop, ready = threading.Event(), threading.Event()
    thread = threading.Thread(target=_serve, args=(server, stop, ready), daemon=True)
    thread.start()
    assert ready.wait(5)
    try:
        monkeypatch.setenv("DUCKFLOW_HOME", str(tmp_path))
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        assert cli(["models", "probe", "openai:my-finetune"]) == 0
    finally:
        stop.set()
        thread.join(5)
    out = capsys.readouterr().out
    sent = server.bodies(PATH)[0]
    assert [t["function"]["name"] for t in sent["tools"]] == ["get_weather"]  # the probe offered one tool
    name = "openai:my-finetune"
    assert remembered(name) is calls_tool
    assert ("works" in out) is calls_tool and "Remembered in" in out
    assert (tmp_path / "models" / "tool_calling.json").is_file()
    assert reliable_native(Named(name)) is calls_tool  # the probe decides the codec from now on
    assert resolve_codec(None, Named(name)).native is calls_tool


def test_a_developers_own_model_keeps_its_supports_tools_claim() -> None:
    class Mine:
        name, supports_tools, is_local = "mycorp:internal-llm", True, False

    class Plain:
        name, supports_tools, is_local = "fake", True, True

    class NoTools:
        name, supports_tools, is_local = "fake", False, True

    assert reliable_native(Mine()) and reliable_native(Plain())
    assert not reliable_native(NoTools())

    class Built:  # built by the registry from a name: the table decides, not the flag
        name, supports_tools, is_local = "ollama:phi3", True, True

    assert not reliable_native(Built())
