"""Bounds and constraints per backend: what a call to each kind of local model carries on the wire."""

from __future__ import annotations

from typing import Any

from duckflow.llm.anthropic import AnthropicModel
from duckflow.llm.constrain import backend_of, constrained
from duckflow.llm.ollama import OllamaModel
from duckflow.llm.openai_compat import OpenAICompatModel
from duckflow.llm.retry import FallbackModel
from duckflow.llm.scripted import ScriptedModel
from duckflow.llm.types import Message, complete
from tests.helpers.fakeserver import FakeServer, Reply, ollama_stream, openai_stream

SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}


def test_each_backend_gets_the_constraint_where_it_reads_it() -> None:
    server = OpenAICompatModel("m", base_url="http://127.0.0.1:8080/v1")
    cloud = OpenAICompatModel("gpt-4o", base_url="https://api.openai.com/v1", api_key="k")
    ollama = OllamaModel("qwen2.5-coder:0.5b", base_url="http://127.0.0.1:11434")
    assert backend_of(server) == "llamacpp-http" and backend_of(FallbackModel([server])) == "llamacpp-http"
    s = constrained(server, max_tokens=50, grammar='root ::= "x"')
    assert s is not None and s.max_tokens == 50 and s.temperature is not None and s.temperature <= 0.2
    assert s.extra["grammar"] == 'root ::= "x"'
    s = constrained(server, max_tokens=50, json_schema=SCHEMA)
    assert s is not None and s.extra["response_format"] == {"type": "json_object", "schema": SCHEMA}
    s = constrained(ollama, max_tokens=50, json_schema=SCHEMA)
    assert s is not None and s.extra == {"format": SCHEMA}
    s = constrained(ollama, max_tokens=50, grammar='root ::= "x"')  # Ollama takes no GBNF: bounds only
    assert s is not None and s.extra == {} and s.max_tokens == 50
    assert constrained(cloud, max_tokens=50, grammar="x") is None
    assert constrained(AnthropicModel("claude-3-5-haiku", api_key="k"), max_tokens=5) is None
    assert constrained(ScriptedModel([]), max_tokens=5) is None


async def test_a_local_server_call_is_bounded_even_when_the_caller_names_no_bound() -> None:
    server = await FakeServer().start()
    try:
        server.queue("/v1/chat/completions", Reply(chunks=openai_stream(["ok"])),
                     Reply(chunks=openai_stream(["ok"])))
        m = OpenAICompatModel("m", base_url=f"{server.url}/v1")
        await complete(m, [Message("user", "hi")])
        body: dict[str, Any] = server.bodies("/v1/chat/completions")[0]
        assert body["max_tokens"] == 1024 and body["temperature"] == 0.2
        await complete(m, [Message("user", "hi")], settings=constrained(m, max_tokens=7, grammar='root ::= "ok"'))
        body = server.bodies("/v1/chat/completions")[1]
        assert body["max_tokens"] == 7 and body["grammar"] == 'root ::= "ok"' and body["seed"] == 0
        server.queue("/api/chat", Reply(chunks=ollama_stream(["{}"])))
        o = OllamaModel("q", base_url=server.url, check_context=False)
        await complete(o, [Message("user", "hi")], settings=constrained(o, max_tokens=9, json_schema=SCHEMA))
        sent = server.bodies("/api/chat")[0]
        assert sent["format"] == SCHEMA and sent["options"]["num_predict"] == 9
    finally:
        await server.close()


def test_a_long_length_bound_does_not_become_a_grammar_that_overflows_llama_cpp() -> None:
    # `essay draft` on the bundled model died with SIGSEGV: its body's max_length=20_000 became
    # 20,000 nested rules, which llama.cpp's recursive grammar parser cannot take
    import json

    import pytest

    gbnf = pytest.importorskip("llama_cpp.llama_grammar")
    from duckflow.apps.smartao.ask import json_settings
    from duckflow.apps.smartao.draft import _Body
    from duckflow.companion.decision import decision_schema

    local = type("Local", (), {"provider": "local", "is_local": True})()
    settings = json_settings(local, _Body, 500)
    schema = settings.extra["json_schema"]
    grammar = gbnf.json_schema_to_gbnf(json.dumps(schema))
    assert max(line.count("(") for line in grammar.splitlines()) <= 1000
    assert "maxLength" not in schema["properties"]["body"] and schema["properties"]["body"]["minLength"] == 1
    assert _Body.model_json_schema()["properties"]["body"]["maxLength"] == 20_000  # the reply is still checked
    decision = constrained(local, max_tokens=50, json_schema=decision_schema())
    assert decision is not None and decision.extra["json_schema"] == decision_schema()  # small bounds are kept
